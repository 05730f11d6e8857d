/*
 * ms_extension/runner.h - ms::pynative::PyboostRunner over pdext's executor.
 *
 * Run(inputs, outputs) is one pdext op call. Each runner op name becomes a pdext op of this
 * module (registered on first use, one per count of outputs that need memory): input "X" is
 * the vector of defined inputs (strided ones reach the kernel as they are: Call already made
 * contiguous what had to be), the outputs are "out0".."outN-1", and the attr "runner" carries
 * the runner's address. Its infer functions give the outputs the shapes and dtypes the source
 * made them with, its workspace function is CalcWorkspace() and its kernel LaunchKernel().
 * So the call goes through pdext_executor.h: the caller binds, infers and allocates, and
 * returns with pending outputs; the allocate stage takes CalcWorkspace() bytes and the launch
 * stage runs LaunchKernel() on the executor's worker; whoever reads an output waits, and an
 * exception thrown in any stage poisons the outputs and comes back at that wait as a pdext
 * error "<op name>: C++ exception: <what>". The executor is the one current on the thread
 * (`with pdext.Executor()`), else one of the module's own.
 *
 * A Run is synchronous (pd_op_run) when it has no output to wait for: every output already
 * has memory (an in-place op writing an input passed again as an output: the write must be
 * visible when the call returns) or there are none.
 *
 * Lifetime: the pipeline keeps the runner (a shared pointer, as MindSpore's does) until its
 * call is done; the module frees finished runners at the next Run.
 */
#ifndef PDEXT_MS_EXTENSION_RUNNER_H
#define PDEXT_MS_EXTENSION_RUNNER_H

#include <atomic>
#include <cctype>
#include <climits>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ms {
namespace pynative {
class PyboostRunner;
}

namespace detail {

/* The op name of the runner made last on this thread: Call names a failure of its function
 * with it. */
inline std::string &last_op_name()
{
    thread_local std::string name;
    return name;
}

/* What this module keeps: its ops (per output count, a registry each, so that every op keeps
 * the source's name), its executor, and the runners of calls in flight. */
struct ModuleState {
    struct InFlight {
        std::shared_ptr<pynative::PyboostRunner> runner;
        pd_tensor token; /* one output of the call: not pending once the call is done */
    };
    std::mutex mu;
    pd_registry *regs[PD_MAX_OUTPUTS + 1] = {};
    std::map<std::string, const pd_op *> ops[PD_MAX_OUTPUTS + 1];
    std::deque<pd_op_def> defs;
    std::deque<const pd_op_def *> tables; /* one op table of one entry per op */
    std::deque<std::string> names;
    pd_executor *ex = nullptr;
    std::deque<InFlight> in_flight;

    /* Drops the runners whose calls are done (they finish in order on a stream, but not
     * across executors: the scan stops at the first one still running). */
    void sweep()
    {
        while (!in_flight.empty() && !pd_tensor_is_pending(&in_flight.front().token)) {
            pd_tensor_release(&in_flight.front().token);
            in_flight.pop_front();
        }
    }
};
/* Never destroyed: at process exit the interpreter is gone, and releasing the tensors of the
 * last calls (a pdext.Tensor's memory may be a Python object's, freed under the GIL) must not
 * run then; the executor's workers simply end with the process. */
inline ModuleState &module_state()
{
    static ModuleState *state = new ModuleState;
    return *state;
}

/* The pdext op for runner op `name` with `n_out` outputs that need memory. */
const pd_op *runner_op(const std::string &name, int n_out);

/* pdext's Python extension's table (bridge.h), set by the first conversion of an argument
 * (which holds the GIL); NULL outside Python. */
inline std::atomic<const pdext_ms_bridge *> &bridge_slot()
{
    static std::atomic<const pdext_ms_bridge *> slot{nullptr};
    return slot;
}

/* The executor a Run goes through: this thread's `with pdext.Executor()` block's, else the
 * module's own (one stream; a small call on an idle stream runs at once on the caller). */
inline pd_executor *current_executor(int32_t *stream)
{
    const pdext_ms_bridge *b = bridge_slot().load(std::memory_order_acquire);
    if (b != nullptr) {
        pd_executor *ex = b->current_executor(stream);
        if (ex != nullptr)
            return ex;
    }
    *stream = 0;
    ModuleState &m = module_state();
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.ex == nullptr) {
        pd_executor_options o = {};
        o.struct_size = sizeof o;
        o.n_streams = 1;
        check(pd_executor_create(nullptr, &o, &m.ex), "ms_extension: the module's executor");
    }
    return m.ex;
}

} // namespace detail

namespace pynative {

class PyboostRunner : public std::enable_shared_from_this<PyboostRunner> {
public:
    explicit PyboostRunner(const std::string &op_name) : op_name_(op_name)
    {
        detail::last_op_name() = op_name;
    }
    virtual ~PyboostRunner() = default;
    PyboostRunner(const PyboostRunner &) = delete;
    PyboostRunner &operator=(const PyboostRunner &) = delete;

    /* Bytes of scratch memory LaunchKernel needs (workspace_ptr()); default none. */
    virtual size_t CalcWorkspace() { return 0; }
    /* The computation. */
    virtual void LaunchKernel() = 0;

    void Run(const std::vector<Tensor> &inputs, const std::vector<Tensor> &outputs);

    const std::string &op_name() const { return op_name_; }
    const std::vector<Tensor> &inputs() const { return inputs_; }
    /* In the pipeline's stages, the outputs with their memory. */
    const std::vector<Tensor> &outputs() const { return launching_ ? launch_outputs_ : outputs_; }
    void *workspace_ptr() { return workspace_; }
    uint32_t stream_id() const { return 0; }
    void *stream() { return nullptr; }

    template <int N, class F, class... Args> static py::object Call(F func, Args &&...args);

    /* pdext's op functions (below), which reach the runner through its "runner" attr. */
    static void pd_infer_shape(pd_kernel_ctx *ctx);
    static void pd_infer_dtype(pd_kernel_ctx *ctx);
    static int64_t pd_workspace_bytes(pd_kernel_ctx *ctx);
    static void pd_kernel(pd_kernel_ctx *ctx);

private:
    static PyboostRunner *of(pd_kernel_ctx *ctx)
    {
        return reinterpret_cast<PyboostRunner *>(static_cast<intptr_t>(pd_attr_int64(ctx, 0)));
    }
    /* The outputs as the running call holds them (the caller attaches its own copies later). */
    void bind_launch(pd_kernel_ctx *ctx)
    {
        if (launching_)
            return;
        launch_outputs_.clear();
        int32_t k = 0;
        for (size_t j = 0; j < outputs_.size(); ++j)
            launch_outputs_.push_back(had_memory_[j] ? outputs_[j]
                                                     : Tensor::view(*pd_output(ctx, k++)));
        if (k == 0)
            (void)pd_output(ctx, 0); /* the placeholder output: made, never read */
        launching_ = true;
    }

    std::string op_name_;
    std::vector<Tensor> inputs_, outputs_, launch_outputs_;
    std::vector<const Tensor *> fresh_; /* the outputs without memory, in order */
    /* Which outputs had memory at Run (read by the stages: the caller attaches memory to the
     * others meanwhile). */
    std::vector<bool> had_memory_;
    bool launching_ = false;
    void *workspace_ = nullptr;
    std::exception_ptr workspace_error_;
};

inline void PyboostRunner::pd_infer_shape(pd_kernel_ctx *ctx)
{
    PyboostRunner *r = of(ctx);
    for (size_t k = 0; k < r->fresh_.size(); ++k) {
        const ShapeVector &s = r->fresh_[k]->shape();
        pd_set_output_shape(ctx, static_cast<int32_t>(k), static_cast<int32_t>(s.size()), s.data());
    }
    if (r->fresh_.empty()) /* the placeholder output of an op without outputs to make */
        pd_set_output_shape(ctx, 0, 0, nullptr);
}

inline void PyboostRunner::pd_infer_dtype(pd_kernel_ctx *ctx)
{
    PyboostRunner *r = of(ctx);
    for (size_t k = 0; k < r->fresh_.size(); ++k)
        pd_set_output_dtype(ctx, static_cast<int32_t>(k),
                            detail::to_pd_dtype(r->fresh_[k]->data_type()));
    if (r->fresh_.empty())
        pd_set_output_dtype(ctx, 0, PD_BOOL);
}

/* Called by the runtime directly (not through the module's exception hook): nothing may
 * escape. An exception is kept and rethrown by the kernel, which the hook does guard. */
inline int64_t PyboostRunner::pd_workspace_bytes(pd_kernel_ctx *ctx)
{
    PyboostRunner *r = of(ctx);
    try {
        r->bind_launch(ctx);
        size_t bytes = r->CalcWorkspace();
        /* An absurd size is the allocate stage's to refuse, with its message. */
        return bytes > static_cast<size_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(bytes);
    } catch (...) {
        r->workspace_error_ = std::current_exception();
        return 0;
    }
}

inline void PyboostRunner::pd_kernel(pd_kernel_ctx *ctx)
{
    PyboostRunner *r = of(ctx);
    struct Reset {
        PyboostRunner *r;
        ~Reset()
        {
            r->launching_ = false;
            r->launch_outputs_.clear();
            r->workspace_ = nullptr;
        }
    } reset{r};
    r->bind_launch(ctx);
    /* The executor took the workspace in its allocate stage; the synchronous runner takes
     * it here (it calls the workspace function on the first ask). */
    r->workspace_ = pd_workspace(ctx);
    if (r->workspace_error_) {
        std::exception_ptr e = r->workspace_error_;
        r->workspace_error_ = nullptr;
        std::rethrow_exception(e);
    }
    r->LaunchKernel();
}

inline void PyboostRunner::Run(const std::vector<Tensor> &inputs,
                               const std::vector<Tensor> &outputs)
{
    std::shared_ptr<PyboostRunner> self = weak_from_this().lock();
    if (self == nullptr)
        throw detail::pd_failure(PD_ERR_INVALID_ARGUMENT,
                                 op_name_ +
                                     ": Run needs a runner made with std::make_shared "
                                     "(the pipeline keeps it alive through a shared pointer)");
    if (outputs.size() > PD_MAX_OUTPUTS)
        throw detail::pd_failure(PD_ERR_INVALID_ARGUMENT, op_name_ + ": " +
                                                              std::to_string(outputs.size()) +
                                                              " outputs; pdext takes at most " +
                                                              std::to_string(PD_MAX_OUTPUTS));
    inputs_ = inputs;
    outputs_ = outputs;
    fresh_.clear();
    std::vector<pd_tensor> in;
    in.reserve(inputs.size() + outputs.size());
    for (const Tensor &t : inputs) {
        if (!t.is_defined())
            continue; /* an optional input passed as None */
        if (!t.has_memory())
            throw detail::pd_failure(PD_ERR_INVALID_ARGUMENT,
                                     op_name_ +
                                         ": an input of Run has no memory (a tensor "
                                         "made by ms::Tensor(dtype, shape) is an output until "
                                         "a Run fills it)");
        in.push_back(t.pd());
    }
    bool in_place = false;
    had_memory_.assign(outputs.size(), false);
    for (size_t k = 0; k < outputs.size(); ++k) {
        const Tensor &o = outputs[k];
        if (!o.is_defined())
            throw detail::pd_failure(PD_ERR_INVALID_ARGUMENT,
                                     op_name_ + ": output " + std::to_string(k) +
                                         " of Run is undefined; every output must be a tensor");
        if (o.has_memory()) {
            in_place = true;
            had_memory_[k] = true;
            in.push_back(o.pd()); /* ordered after its maker, written in place */
        } else {
            fresh_.push_back(&o);
        }
    }
    if (in.size() > 4096)
        throw detail::pd_failure(PD_ERR_INVALID_ARGUMENT, op_name_ + ": too many inputs");
    const int n_out = static_cast<int>(fresh_.size());
    const pd_op *op = detail::runner_op(op_name_, n_out);
    /* pdext ops have at least one output: an op with none to make gets a 0-d placeholder. */
    const int n_decl = n_out == 0 ? 1 : n_out;
    pd_attr attr = pd_attr_of_int64("runner",
                                    static_cast<int64_t>(reinterpret_cast<intptr_t>(this)));
    pd_arg in_arg = {"X", in.data(), static_cast<int32_t>(in.size())};
    pd_tensor outs[PD_MAX_OUTPUTS] = {};
    pd_arg out_args[PD_MAX_OUTPUTS];
    for (int k = 0; k < n_decl; ++k)
        out_args[k] = pd_arg_of(&outs[k]);

    detail::ModuleState &m = detail::module_state();
    int32_t stream = 0;
    pd_executor *ex = in_place || n_out == 0 ? nullptr : detail::current_executor(&stream);
    pd_status st;
    if (ex == nullptr) {
        st = pd_op_run(op, &in_arg, 1, &attr, 1, out_args, n_decl);
    } else {
        st = pd_op_run_async(ex, stream, op, &in_arg, 1, &attr, 1, out_args, n_decl);
    }
    if (st != PD_OK)
        throw detail::pd_failure(st, pd_last_error());
    if (ex != nullptr) {
        std::lock_guard<std::mutex> lock(m.mu);
        m.sweep();
        if (pd_tensor_is_pending(&outs[0])) {
            detail::ModuleState::InFlight f{self, {}};
            pd_tensor_retain(&f.token, &outs[0]);
            m.in_flight.push_back(std::move(f));
        }
    }
    for (int k = 0; k < n_out; ++k)
        fresh_[k]->attach(&outs[k]);
    if (n_out == 0)
        pd_tensor_release(&outs[0]);
    fresh_.clear();
}

} // namespace pynative

namespace detail {

/* The op functions' declarations: inputs, outputs and attr. */
inline const char *const *output_names()
{
    static const char *const names[PD_MAX_OUTPUTS] = {"out0",  "out1",  "out2",  "out3",
                                                      "out4",  "out5",  "out6",  "out7",
                                                      "out8",  "out9",  "out10", "out11",
                                                      "out12", "out13", "out14", "out15"};
    return names;
}

inline const pd_op *runner_op(const std::string &name, int n_out)
{
    ModuleState &m = module_state();
    std::lock_guard<std::mutex> lock(m.mu);
    auto found = m.ops[n_out].find(name);
    if (found != m.ops[n_out].end())
        return found->second;
    if (m.regs[n_out] == nullptr)
        check(pd_registry_create(&m.regs[n_out]), "ms_extension");
    /* pdext op names are identifiers and dots; others characters become '_'. */
    std::string clean = name.empty() ? std::string("ms_op") : name;
    for (char &c : clean)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'))
            c = '_';
    m.names.push_back(clean);
    pd_op_def def = {};
    def.struct_size = sizeof(pd_op_def);
    def.kind = PD_OP_FORWARD;
    def.name = m.names.back().c_str();
    def.file = "ms_extension/runner.h";
    def.line = __LINE__;
    def.inputs[0] = "X@VECTOR@OPTIONAL";
    for (int k = 0; k < (n_out == 0 ? 1 : n_out); ++k)
        def.outputs[k] = output_names()[k];
    def.attrs[0] = "runner: int64_t";
    def.kernel = &pynative::PyboostRunner::pd_kernel;
    def.infer_shape = &pynative::PyboostRunner::pd_infer_shape;
    def.infer_dtype = &pynative::PyboostRunner::pd_infer_dtype;
    def.flags = PD_OP_STRIDED_INPUTS;
    def.workspace = &pynative::PyboostRunner::pd_workspace_bytes;
    m.defs.push_back(def);
    /* One op table of one entry; the deque keeps every entry where it is. */
    std::deque<const pd_op_def *> &tables = m.tables;
    tables.push_back(&m.defs.back());
    pd_module_info info = {};
    info.struct_size = sizeof info;
    info.abi_major = PD_ABI_MAJOR;
    info.abi_minor = PD_ABI_MINOR;
    info.ops_begin = &tables.back();
    info.ops_end = &tables.back() + 1;
    info.api_slot = &pd__api;
    info.sdk_version = PD_VERSION_STRING;
    info.compiler = PD__COMPILER_ID;
    info.invoke = pd__cxx_invoke;
    pd_module *mod = nullptr;
    check(pd_module_load_info(m.regs[n_out], &info, "ms_extension", &mod), "ms_extension");
    const pd_op *op = pd_module_op(mod, 0);
    m.ops[n_out][name] = op;
    return op;
}

} // namespace detail
} // namespace ms

#endif /* PDEXT_MS_EXTENSION_RUNNER_H */
