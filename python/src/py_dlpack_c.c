/*
 * py_dlpack_c.c - framework tensors in and out of plain pdext calls through DLPack's C exchange
 * API (DLPack >= 1.2: `type(t).__dlpack_c_exchange_api__`, a capsule over a static table of C
 * functions; torch >= 2.10 and Paddle 3.3 publish it), with no Python call either way.
 *
 * Why: the Python protocol costs tens of microseconds a call on these frameworks (torch 2.15's
 * t.__dlpack__() alone; Paddle 3.3: __dlpack__ ~10 us and paddle.from_dlpack ~38 us), where
 * dltensor_from_py_object_no_sync fills a borrowed DLTensor and
 * managed_tensor_to_py_object_no_sync makes the framework's tensor over pdext's memory, both
 * in C. Only CPU memory takes this way: the "no sync" functions leave device streams to the
 * consumer, and device tensors keep __dlpack__, which is asked with the call's stream. The
 * checks each framework's Python protocol made are kept: torch's tensors that require grad
 * and lazily negated or conjugated views, Paddle's tensors that record gradients.
 */
#include "py_internal.h"

#include "py_dlpack.h"

#include <stdlib.h>
#include <string.h>

/*
 * A type may publish, as the class attribute __dlpack_c_exchange_api__, a PyCapsule named
 * "dlpack_exchange_api" over a static table of C functions. Its dltensor_from_py_object_no_sync
 * fills a DLTensor on the caller's stack that views the object's memory (valid while the
 * object lives, which the call's arguments guarantee): no capsule, no managed tensor, no
 * deleter, no Python call; a fraction of __dlpack__()'s cost on a torch tensor. Only the
 * layout's first fields are declared; it is DLPack's and must not change. CPU tensors take this
 * way; others (CUDA: __dlpack__ is asked with the call's stream) take __dlpack__. */
typedef struct pdext_dl_exchange_api {
    struct {
        uint32_t major, minor;
        void *prev_api;
    } header;
    void *managed_tensor_allocator;
    void *managed_tensor_from_py_object_no_sync;
    int (*managed_tensor_to_py_object_no_sync)(void *managed, void **out_py_object);
    int (*dltensor_from_py_object_no_sync)(void *py_object, pdext_dl_tensor *out);
    void *current_work_stream;
} pdext_dl_exchange_api;

/* Whose tensors a type's are, for the checks their Python protocol made. */
enum exchange_kind {
    EXCHANGE_OTHER = 0,
    EXCHANGE_TORCH = 1, /* requires_grad, is_neg, resolve_neg */
    EXCHANGE_PADDLE = 2 /* stop_gradient */
};

/* The exchange table of obj's type, or NULL (no exception) when it has none; *kind says whose
 * type it is. One type is remembered (a strong reference: the address is not reused while it
 * is kept), since a program passes one framework's tensors over and over. */
static const pdext_dl_exchange_api *dl_exchange_api(PyObject *obj, enum exchange_kind *kind)
{
    static PyTypeObject *seen_type;
    static const pdext_dl_exchange_api *seen_api;
    static enum exchange_kind seen_kind;
    PyTypeObject *type = Py_TYPE(obj);
    if (type == seen_type) {
        *kind = seen_kind;
        return seen_api;
    }
    const pdext_dl_exchange_api *api = NULL;
    PyObject *cap = PyObject_GetAttrString((PyObject *)type, "__dlpack_c_exchange_api__");
    if (cap != NULL && PyCapsule_IsValid(cap, "dlpack_exchange_api")) {
        api = PyCapsule_GetPointer(cap, "dlpack_exchange_api");
        if (api != NULL && (api->header.major != 1 || api->dltensor_from_py_object_no_sync == NULL))
            api = NULL;
    }
    Py_XDECREF(cap);
    PyErr_Clear();
    /* torch's tensor (Paddle's has the exchange API and a requires_grad too, but no lazy
     * negation; it says whether it records gradients by stop_gradient) */
    seen_kind = EXCHANGE_OTHER;
    if (api != NULL && PyObject_HasAttrString((PyObject *)type, "requires_grad") &&
        PyObject_HasAttrString((PyObject *)type, "is_neg") &&
        PyObject_HasAttrString((PyObject *)type, "resolve_neg"))
        seen_kind = EXCHANGE_TORCH;
    else if (api != NULL && PyObject_HasAttrString((PyObject *)type, "stop_gradient"))
        seen_kind = EXCHANGE_PADDLE;
    PyErr_Clear();
    Py_INCREF(type);
    Py_XDECREF((PyObject *)seen_type);
    seen_type = type;
    seen_api = api;
    *kind = seen_kind;
    return api;
}

/* DLPack 1.x's DLManagedTensorVersioned, as managed_tensor_to_py_object_no_sync takes it, with
 * the pdext tensor it lends out and room for its shape and strides. */
typedef struct pdext_dl_versioned {
    uint32_t major, minor;
    void *manager_ctx;
    void (*deleter)(struct pdext_dl_versioned *self);
    uint64_t flags;
    pdext_dl_tensor dl_tensor;
    pd_tensor t;
    int64_t shape[PD_MAX_DIMS], strides[PD_MAX_DIMS];
} pdext_dl_versioned;

/* Called by the framework, from any thread, when its tensor goes: C only, so no GIL. */
static void dl_versioned_deleter(pdext_dl_versioned *m)
{
    pd_tensor_release(&m->t);
    free(m);
}

PyObject *pdext_dl_exchange_result(PyObject *first, pd_tensor *t)
{
    enum exchange_kind kind;
    const pdext_dl_exchange_api *api = dl_exchange_api(first, &kind);
    if (api == NULL || api->managed_tensor_to_py_object_no_sync == NULL ||
        t->place.type != PD_PLACE_CPU || t->storage == NULL)
        return NULL;
    pdext_dl_versioned *m = calloc(1, sizeof *m);
    if (m == NULL)
        return PyErr_NoMemory();
    m->major = 1;
    m->manager_ctx = m;
    m->deleter = dl_versioned_deleter;
    m->t = *t;
    memset(t, 0, sizeof *t); /* the reference moves into m */
    m->dl_tensor.data = m->t.data;
    m->dl_tensor.device.device_type = PDEXT_DL_CPU;
    m->dl_tensor.ndim = m->t.ndim;
    m->dl_tensor.dtype = pdext_dl_from_dtype(m->t.dtype);
    for (int32_t d = 0; d < m->t.ndim; ++d) {
        m->shape[d] = m->t.shape[d];
        m->strides[d] = pd_stride(&m->t, d);
    }
    m->dl_tensor.shape = m->shape;
    m->dl_tensor.strides = m->strides;
    void *out = NULL;
    if (api->managed_tensor_to_py_object_no_sync(m, &out) != 0) {
        /* The producer did not take it: the tensor goes back to the caller's way out
         * (from_dlpack), which says why if it fails too. */
        *t = m->t;
        free(m);
        PyErr_Clear();
        return NULL;
    }
    return out;
}

/* Whether the torch tensor's method `name` (is_conj, is_neg) answers anything but False: the
 * exchange API hands out the memory as it is, without the lazy conjugation or negation those
 * bits stand for. */
static bool torch_flagged(PyObject *obj, const char *name)
{
    static PyObject *names[2]; /* interned "is_neg", "is_conj" */
    int k = name[3] == 'n' ? 0 : 1;
    if (names[k] == NULL && (names[k] = PyUnicode_InternFromString(name)) == NULL) {
        PyErr_Clear();
        return true;
    }
    PyObject *v = PyObject_CallMethodNoArgs(obj, names[k]);
    if (v == NULL)
        PyErr_Clear();
    bool flagged = v != Py_False;
    Py_XDECREF(v);
    return flagged;
}

/* Whether the exchange API may take torch tensor obj: not when it requires grad (torch's
 * __dlpack__ refuses it, and the plain call records no history: that refusal stays, said by
 * __dlpack__). */
static bool torch_exchangeable(PyObject *obj)
{
    static PyObject *requires_grad;
    if (requires_grad == NULL &&
        (requires_grad = PyUnicode_InternFromString("requires_grad")) == NULL) {
        PyErr_Clear();
        return false;
    }
    PyObject *v = PyObject_GetAttr(obj, requires_grad);
    if (v == NULL)
        PyErr_Clear();
    bool ok = v == Py_False;
    Py_XDECREF(v);
    return ok;
}

/* A torch tensor with the negative bit set (x.conj().imag, torch._neg_view) is a lazy negation
 * of its memory, which both DLPack ways hand out as it is: the input is then its resolve_neg()
 * (a negated copy, kept by the borrow), or refused when the op writes it. 1: *obj is the copy;
 * 0: nothing to do; -1 with an exception. */
static int torch_resolve_neg(PyObject **obj, bool writable, const pdext_input_name *who,
                             pdext_borrow *b)
{
    if (!torch_flagged(*obj, "is_neg"))
        return 0;
    if (writable) {
        PyErr_Format(PyExc_ValueError,
                     "%s is a lazily negated torch view (is_neg()), which the op cannot write "
                     "in place; pass x.resolve_neg() and copy it back",
                     pdext_input_text(who));
        return -1;
    }
    PyObject *copy = PyObject_CallMethod(*obj, "resolve_neg", NULL);
    if (copy == NULL)
        return -1;
    b->buffer_owner = copy;
    *obj = copy;
    return 1;
}

/* A Paddle tensor that records gradients (stop_gradient=False): a plain call would drop them
 * silently, so it is refused, saying what records them. true with the exception set. */
static bool paddle_records_grad(PyObject *obj, const pdext_input_name *who)
{
    PyObject *sg = PyObject_GetAttrString(obj, "stop_gradient");
    int stop = sg == NULL ? -1 : PyObject_IsTrue(sg);
    Py_XDECREF(sg);
    if (stop < 0) {
        PyErr_Clear();
        return false;
    }
    if (stop)
        return false;
    PyErr_Format(PyExc_ValueError,
                 "%s is a Paddle tensor that requires grad (stop_gradient=False); a plain pdext "
                 "call records no gradient: register the ops with pdext.paddle.register for "
                 "Paddle's autograd, or pass t.detach()",
                 pdext_input_text(who));
    return true;
}

int pdext_dl_exchange_borrow(PyObject **objp, bool writable, const pdext_input_name *who,
                             pd_tensor *t, pdext_borrow *b)
{
    PyObject *obj = *objp;
    enum exchange_kind kind;
    const pdext_dl_exchange_api *api = dl_exchange_api(obj, &kind);
    if (api == NULL)
        return 0;
    if (kind == EXCHANGE_PADDLE && paddle_records_grad(obj, who))
        return -1;
    if (kind == EXCHANGE_TORCH) {
        if (!torch_exchangeable(obj))
            return 0; /* __dlpack__ refuses it, in torch's own words */
        if (torch_resolve_neg(objp, writable, who, b) < 0)
            return -1;
        obj = *objp;
    }
    pdext_dl_tensor view;
    if (api->dltensor_from_py_object_no_sync(obj, &view) != 0) {
        PyErr_Clear(); /* __dlpack__ says why, in the producer's own words */
        return 0;
    }
    if (view.device.device_type != PDEXT_DL_CPU ||
        (view.dtype.code == PDEXT_DL_COMPLEX && torch_flagged(obj, "is_conj")))
        return 0; /* device memory: __dlpack__, which is asked with the call's stream */
    if (pdext_borrow_dl(&view, who, t) == 0)
        return 1;
    Py_CLEAR(b->buffer_owner);
    return -1;
}
