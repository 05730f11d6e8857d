/*
 * pd_paddle_op.h - the record through which the Paddle C++ front (paddle/op_builder.h) has the
 * runtime check an op it built, in plain C types.
 *
 * A PD_BUILD_OP builder fills the op's pd_op_def (names, functions) and this record: the
 * parameter lists of its PD_KERNEL / PD_INFER_SHAPE / PD_INFER_DTYPE functions and the last
 * list that had too many names. At the op's first call the wrapper hands the record to
 * pd_api.paddle_op_check, which fills in once what the wrappers read at every call (which
 * inputs and outputs are vectors, optional or inplace, which attrs each infer function is
 * handed) and whether the declarations and the signatures agree; if not, every call of the op
 * fails with the message the same function writes. That checking code runs only once per op,
 * so it lives in libpdext instead of being compiled into every Paddle module; and because
 * only C types cross, a module built with other C++ flags (-D_GLIBCXX_USE_CXX11_ABI=0) uses
 * it alike.
 */
#ifndef PD_PADDLE_OP_H
#define PD_PADDLE_OP_H

#include "pd_base.h"
#include "pd_op.h"

PD_EXTERN_C_BEGIN

/* The kind of one parameter of a Paddle kernel or infer function (paddle::detail::pkind has
 * the same values). Values are part of the ABI. */
enum {
    PD_PADDLE_P_TENSOR = 0,      /* const Tensor& / Tensor */
    PD_PADDLE_P_VEC = 1,         /* const std::vector<Tensor>& */
    PD_PADDLE_P_OPT = 2,         /* const optional<Tensor>& */
    PD_PADDLE_P_OPT_VEC = 3,     /* const optional<std::vector<Tensor>>& */
    PD_PADDLE_P_INPLACE = 4,     /* Tensor& */
    PD_PADDLE_P_VEC_INPLACE = 5, /* std::vector<Tensor>& */
    PD_PADDLE_P_OUT_PTR = 6,     /* Tensor* */
    PD_PADDLE_P_VEC_OUT_PTR = 7, /* std::vector<Tensor*> */
    PD_PADDLE_P_SHAPE = 8,       /* std::vector<int64_t> (infer_shape) */
    PD_PADDLE_P_VEC_SHAPE = 9,   /* std::vector<std::vector<int64_t>> */
    PD_PADDLE_P_OPT_SHAPE = 10,  /* optional<std::vector<int64_t>> */
    PD_PADDLE_P_OPT_VEC_SHAPE = 11,
    PD_PADDLE_P_DTYPE = 12, /* DataType (infer_dtype) */
    PD_PADDLE_P_VEC_DTYPE = 13,
    PD_PADDLE_P_OPT_DTYPE = 14,
    PD_PADDLE_P_OPT_VEC_DTYPE = 15,
    PD_PADDLE_P_ATTR = 16, /* an attr value */
    PD_PADDLE_P_BAD = 17
};

/* One function's parameter list. */
typedef struct pd_paddle_sig {
    const char *what;          /* "PD_KERNEL", "PD_INFER_SHAPE", "PD_INFER_DTYPE"; NULL: none */
    const uint8_t *kinds;      /* PD_PADDLE_P_* per parameter */
    const pd_attr_type *attrs; /* per parameter: an attr's type; PD_ATTR_UNDEFINED otherwise */
    size_t n;                  /* parameters */
} pd_paddle_sig;

/* pd_paddle_op.state */
#define PD_PADDLE_OP_UNCHECKED 0
#define PD_PADDLE_OP_OK 1
#define PD_PADDLE_OP_BAD 2

typedef struct pd_paddle_op {
    /* Filled by the builder when the module's initializers run. */
    const pd_op_def *def;    /* the op's definition: its names */
    pd_paddle_sig sig[3];    /* kernel, infer_shape, infer_dtype */
    const char *overflow;    /* "inputs", "outputs", "attrs" or "inplace": the last list given
                                more names than pd_op_def holds; NULL: none */
    uint64_t overflow_count; /* how many it was given */
    /* Filled by pd_api.paddle_op_check, once; read after an acquiring load of state. */
    int32_t state; /* PD_PADDLE_OP_* */
    int32_t n_inputs, n_outputs, n_attrs;
    bool in_vector[PD_MAX_INPUTS];
    bool in_optional[PD_MAX_INPUTS];
    bool out_vector[PD_MAX_OUTPUTS];
    bool out_inplace[PD_MAX_OUTPUTS];
    int32_t n_inplace;
    bool any_vector_output;
    pd_attr_type attr_type[PD_MAX_ATTRS];
    /* The attrs an infer function is handed, in declared order, as Paddle hands them
     * (custom_operator.cc): infer_dtype ([0]) gets every attr; infer_shape ([1]) every attr
     * but the std::vector<int64_t> ones (a std::vector<int64_t> parameter of a shape function
     * is always an input's shape). An infer function's k-th attr parameter is declared attr
     * infer_attrs[shape?1:0][k]; it may take fewer than it is handed, never skip one. */
    int32_t infer_attrs[2][PD_MAX_ATTRS];
    int32_t n_infer_attrs[2];
} pd_paddle_op;

PD_EXTERN_C_END

#endif /* PD_PADDLE_OP_H */
