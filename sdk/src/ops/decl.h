/*
 * decl.h - the one parser of op declarations (decl.c): input/output names with Paddle's
 * @VECTOR / @OPTIONAL / @GRAD segments, attr declarations "name: type [= default]" in the
 * nine Paddle type spellings, grad and registered op names, and lookup of a declared name.
 * opdef.c, the runner, the context functions, the registry and (through pd_op_*_info) the
 * `pdext` command all read declarations through it, so they cannot disagree.
 */
#ifndef PD_DECL_H
#define PD_DECL_H

#include "pdext.h"

#define PD__NAME_MAX 128 /* longest input/output/attr name, registered op name */

/* One declared input or output, parsed from its string. */
typedef struct pd__arg_decl {
    const char *decl;        /* as declared: "X", "X@VECTOR", "Y@OPTIONAL", "X@VECTOR@GRAD" */
    char base[PD__NAME_MAX]; /* decl without its @VECTOR / @OPTIONAL segments: "X@GRAD". Other
                              * segments (@GRAD, @NEW, and unknown ones such as "@VECTORS")
                              * stay part of the name */
    bool is_vector;
    bool is_optional;
} pd__arg_decl;

/* One declared attribute, parsed from "name: type" or "name: type = default". */
typedef struct pd__attr_decl {
    const char *decl; /* as declared */
    char name[PD__NAME_MAX];
    pd_attr_type type;
    bool has_default;
    pd_attr default_value; /* when has_default: the value (name NULL: the struct may be
                            * copied, so users set it); vectors and strings point into
                            * default_block */
    void *default_block;   /* malloc'd elements / characters of the default, or NULL */
    char *default_text;    /* malloc'd: the default as written, trimmed ("-1", "{1, 2}");
                            * NULL without a default */
} pd__attr_decl;

/* Parses a declared input or output name into *out. `where` ("op 'x' (x.c:3)") and `list`
 * ("input" / "output") and `index` name it in the message; PD_ERR_INVALID_MODULE on failure. */
pd_status pd__decl_parse_arg(const char *where, const char *list, int32_t index, const char *decl,
                             pd__arg_decl *out);
/* Parses "name: type" or "name: type = default"; the default is parsed and checked against
 * the type. On failure nothing stays allocated. Release with pd__decl_attr_free. */
pd_status pd__decl_parse_attr(const char *where, int32_t index, const char *decl,
                              pd__attr_decl *out);
/* Frees what pd__decl_parse_attr allocated (the default's elements and text). */
void pd__decl_attr_free(pd__attr_decl *a);

/* Parses an attr type spelling ("int64_t", "std::vector< int >", "int[]", ...); white space
 * is allowed anywhere except inside a word. PD_ATTR_UNDEFINED when unknown. */
pd_attr_type pd__attr_type_parse(const char *spelling);

/* Index of the declared arg named `name`: the declaration itself first, else its base name
 * ("X" finds "X@VECTOR"); -1 if none. */
int32_t pd__decl_find(const pd__arg_decl *decls, int32_t n, const char *name);
/* Index of the attr named `name`, or -1. */
int32_t pd__decl_attr_find(const pd__attr_decl *attrs, int32_t n, const char *name);
/* "X, Out, Out@GRAD" (the declarations, as declared) into buf, or "none"; for messages. */
const char *pd__decl_names(const pd__arg_decl *decls, int32_t n, char *buf, size_t size);
/* "axis: int64_t = -1, name: std::string" (`typed`) or "axis, name" into buf, or "none"; for
 * messages. */
const char *pd__decl_attr_names(const pd__attr_decl *attrs, int32_t n, bool typed, char *buf,
                                size_t size);

/* The input whose gradient output `grad` names ("X@GRAD" -> the input "X"), or -1. */
int32_t pd__decl_grad_source(const pd__arg_decl *inputs, int32_t n, const pd__arg_decl *grad);

/* Where a grad op's input named `name` (its base name) comes from, against the forward op's
 * declared inputs and outputs: the rule pdext.h states at pd_grad_source. The position goes
 * to *index (-1 for PD_GRAD_FROM_NONE). */
pd_grad_source pd__decl_grad_input_source(const pd__arg_decl *fwd_in, int32_t n_in,
                                          const pd__arg_decl *fwd_out, int32_t n_out,
                                          const char *name, int32_t *index);

/* The registered name of an op of `kind` for forward name `name` into buf (false: too long). */
bool pd__op_registered_name(const char *name, pd_op_kind kind, char *buf, size_t size);
/* The registered name of the op one kind up from registered `name` of `kind` ("x_grad" for
 * "x", "x_grad_grad" for "x_grad"; false for a double grad op or when too long) or one kind
 * down ("x" for "x_grad"; false for a forward op). */
bool pd__op_grad_name(const char *name, pd_op_kind kind, char *buf, size_t size);
bool pd__op_forward_name(const char *name, pd_op_kind kind, char *buf, size_t size);

#endif /* PD_DECL_H */
