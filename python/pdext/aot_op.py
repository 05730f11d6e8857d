"""MindSpore AOT custom operators from Python, with MindSpore's keywords:

    add = pdext.aot("add.cc:CustomAdd", out_dtype="float32")     # like ops.Custom(..., "aot")
    z = add(x, y)                                                # numpy in, numpy out
    scale = pdext.aot("scale_cumsum.cc:ScaleCumsum", scale=2.0, bias=0.5)
    scale(x); scale(x, scale=3.0)                                # attrs: defaults, overridable

"lib.so:Func" loads a prebuilt library; "file.cc:Func" (.cc .cpp .cxx .c, .cu) compiles it
first as MindSpore does, through the JIT's cache (a warm load compiles nothing). The kernel is
registered through libpdext_aot (pdext_aot.h) and runs through pdext's one runner, like any op.
"""

import numbers
import os

from . import _pdext

# MindSpore's "same as the first input": left to the library's FInferShape / FInferType, else
# input 0.
_SAME = None


# Names of the dtypes met so far: an out_dtype function answers with the same few dtype objects
# at every call, and naming one through numpy costs ~10 us.
_DTYPE_NAMES = {}


def _dtype_name(value, what):
    """pdext's name of a dtype given as a string, a numpy dtype or scalar type, a torch dtype or
    a MindSpore type (mstype.float32 prints as Float32)."""
    if value is None:
        return None
    try:
        return _DTYPE_NAMES[value]
    except (KeyError, TypeError):  # not met yet, or unhashable
        pass
    name = _dtype_name_uncached(value, what)
    try:
        if len(_DTYPE_NAMES) < 256:
            _DTYPE_NAMES[value] = name
    except TypeError:
        pass
    return name


def _dtype_name_uncached(value, what):
    if isinstance(value, str):
        return value.lower()
    text = str(value)
    if text.startswith("torch."):
        return text[len("torch.") :]
    try:
        import numpy

        return numpy.dtype(value).name
    except TypeError:
        pass
    if text.isalnum():
        return text.lower()
    raise TypeError("%s must be a dtype (a name, a numpy or torch dtype), got %r" % (what, value))


def _attr_decl(name, value):
    """The declaration of an attr given by value: its type from the Python value, the value as
    its default (MindSpore's kernels read attrs with coercions, whatever the declared type)."""

    def literal(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"%s"' % v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return repr(v) if isinstance(v, float) else str(int(v))

    def kind(v):
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, numbers.Integral):
            return "int64_t"
        if isinstance(v, numbers.Real):
            return "double"
        if isinstance(v, str):
            return "std::string"
        return None

    if isinstance(value, (list, tuple)):
        if any(isinstance(v, (list, tuple)) for v in value):
            # A nested list travels as text, "[[1, 2], [3]]", which Attr<vector<vector<>>> reads.
            return "%s: std::string = %s" % (name, literal(str([list(v) for v in value])))
        kinds = {kind(v) for v in value}
        if kinds <= {"int64_t"}:
            elem = "int64_t"
        elif kinds <= {"int64_t", "double"}:
            elem = "float"
        elif kinds == {"std::string"}:
            elem = "std::string"
        else:
            raise TypeError("pdext.aot: attr %r mixes element types: %r" % (name, value))
        items = ", ".join(literal(float(v) if elem == "float" else v) for v in value)
        return "%s: std::vector<%s> = {%s}" % (name, elem, items)
    k = kind(value)
    if k is None:
        raise TypeError(
            "pdext.aot: attr %r is a %s; attrs take bool, int, float, str or lists of them"
            % (name, type(value).__name__)
        )
    return "%s: %s = %s" % (name, k, literal(value))


def _outputs(out_shape, out_dtype, n_outputs=None):
    """[(dtype name or None, shape or None)] per output; several outputs when out_shape is a
    list of shapes or out_dtype a list of dtypes (or n_outputs says so)."""
    several_shapes = isinstance(out_shape, (list, tuple)) and any(
        isinstance(s, (list, tuple)) for s in out_shape
    )
    several_dtypes = isinstance(out_dtype, (list, tuple))
    shapes = list(out_shape) if several_shapes else [out_shape]
    dtypes = list(out_dtype) if several_dtypes else [out_dtype]
    if several_shapes and several_dtypes and len(shapes) != len(dtypes):
        raise ValueError(
            "pdext.aot: out_shape names %d outputs but out_dtype %d" % (len(shapes), len(dtypes))
        )
    n = max(len(shapes), len(dtypes))
    if n_outputs is not None:
        if n not in (1, n_outputs) or n_outputs < 1:
            raise ValueError("pdext.aot: n_outputs is %r but out_shape / out_dtype name %d"
                             % (n_outputs, n))
        n = n_outputs
    shapes = shapes * n if len(shapes) == 1 else shapes
    dtypes = dtypes * n if len(dtypes) == 1 else dtypes
    out = []
    for i, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        if shape is not None and not isinstance(shape, (list, tuple)):
            raise TypeError("pdext.aot: out_shape must be a list of ints (or one per output)")
        out.append((_dtype_name(dtype, "out_dtype"), None if shape is None else list(shape)))
    return out


class AotOp:
    """A MindSpore AOT function as a callable: AotOp(x, y, attr=value). Made by pdext.aot."""

    def __init__(self, func, out_shape, out_dtype, n_inputs, n_outputs, name, input_names,
                 extra_cflags, build_directory, attrs):
        split = (_pdext.aot_spec_split(os.fspath(func))
                 if isinstance(func, (str, os.PathLike)) else None)
        if split is None:
            raise ValueError(
                "pdext.aot: func must be 'path/lib.so:Func' or 'path/file.cc:Func', got %r"
                % (func,)
            )
        self.func = os.fspath(func)
        self._shape_fn = out_shape if callable(out_shape) else None
        # numpy's scalar types (np.float32) are callable too: they name a dtype.
        dtype_fn = callable(out_dtype) and not isinstance(out_dtype, type)
        self._dtype_fn = out_dtype if dtype_fn else None
        self._out_shape = None if self._shape_fn else out_shape
        self._out_dtype = None if self._dtype_fn else out_dtype
        if self._shape_fn is None and self._dtype_fn is None:
            _outputs(out_shape, out_dtype, n_outputs)  # bad ones fail here, not at the call
        self._n_outputs = n_outputs
        self._name = name
        self._input_names = None if input_names is None else list(input_names)
        self._cflags = extra_cflags
        self._build_dir = None if build_directory is None else os.fspath(build_directory)
        self._attrs = [_attr_decl(k, v) for k, v in attrs.items()]
        self._n_inputs = n_inputs if n_inputs is not None else (
            len(self._input_names) if self._input_names is not None else None)
        self._ops = {}
        self.__name__ = name or split[1]
        self.__doc__ = "MindSpore AOT op %s (pdext.aot)" % self.func
        # Fixed outputs: the op of each input count, for __call__'s fast path (one dict look-up
        # over the raw op's call).
        self._fixed = None
        self._by_count = {}
        # Functions: the op of each (input count, shape answer, dtype answer) met so far, so
        # that a call costs the functions and a look-up, not _outputs' checks (~5 us).
        self._by_answer = {}
        if self._shape_fn is None and self._dtype_fn is None:
            self._fixed = _outputs(out_shape, out_dtype, n_outputs)
            if self._n_inputs is not None:
                self.op = self._load(self._n_inputs, self._fixed)
                self._by_count[self._n_inputs] = self.op

    def _load(self, n_inputs, outputs):
        key = (n_inputs, tuple((d, None if s is None else tuple(s)) for d, s in outputs))
        op = self._ops.get(key)
        if op is None:
            library = _pdext.aot_load(
                self.func,
                n_inputs,
                outputs,
                self._attrs,
                name=self._name,
                input_names=self._input_names,
                compile_flags=self._cflags,
                build_directory=self._build_dir,
            )
            op = library.ops()[0]
            self._ops[key] = op
        return op

    def __call__(self, *inputs, **attrs):
        op = self._by_count.get(len(inputs))
        if op is not None:
            return op(*inputs, **attrs) if attrs else op(*inputs)
        if self._n_inputs is not None and len(inputs) != self._n_inputs:
            raise TypeError(
                "%s() takes %d inputs but %d were given" % (self.__name__, self._n_inputs,
                                                            len(inputs))
            )
        if self._fixed is not None:
            op = self._by_count[len(inputs)] = self._load(len(inputs), self._fixed)
            return op(*inputs, **attrs)
        out_shape, out_dtype = self._out_shape, self._out_dtype
        if self._shape_fn is not None:
            out_shape = self._shape_fn(*[tuple(x.shape) for x in inputs])
        if self._dtype_fn is not None:
            out_dtype = self._dtype_fn(*[x.dtype for x in inputs])
        try:  # lists of lists (several outputs) are not hashable: no look-up for them
            key = (len(inputs), tuple(out_shape) if type(out_shape) is list else out_shape,
                   out_dtype)
            op = self._by_answer.get(key)
        except TypeError:
            key = op = None
        if op is None:
            op = self._load(len(inputs), _outputs(out_shape, out_dtype, self._n_outputs))
            if key is not None and len(self._by_answer) < 1024:
                self._by_answer[key] = op
        return op(*inputs, **attrs) if attrs else op(*inputs)

    def __repr__(self):
        return "<pdext aot op %s>" % self.func


def aot(func, out_shape=None, out_dtype=None, func_type="aot", *, n_inputs=None, n_outputs=None,
        name=None, input_names=None, extra_cflags=None, build_directory=None, **attrs):
    """A callable running MindSpore AOT function `func` ("lib.so:Func" or "file.cc:Func").

    out_shape: the output's shape (a list of ints, one list per output for several), a function
    of the input shapes (MindSpore's `lambda x, y: x`), or None: the library's FInferShape,
    else the first input's shape. out_dtype: a dtype (name, numpy or torch dtype; a list for
    several outputs), a function of the input dtypes, or None: FInferType, else the first
    input's. Other keywords are attrs: their values become the attrs' defaults, which a call
    may override by keyword. n_inputs (or input_names) fixes the input count and loads now;
    without it the first call's count is taken. n_outputs: the output count when the library's
    infer functions give several outputs and out_shape / out_dtype do not. extra_cflags go to the compiler of a source
    spec, build_directory replaces the JIT cache. Failures raise pdext.BuildError (compiling),
    FileNotFoundError / ValueError (the library or function), pdext.OpError (a call)."""
    if func_type != "aot":
        raise ValueError("pdext.aot runs func_type='aot' kernels only, got %r" % (func_type,))
    return AotOp(func, out_shape, out_dtype, n_inputs, n_outputs, name, input_names,
                 extra_cflags, build_directory, attrs)
