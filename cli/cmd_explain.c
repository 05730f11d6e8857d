/*
 * cmd_explain.c - `pdext explain LIB.so`: what a library is and whether this runtime can load
 * it, for the user whose load failed or who got a library from elsewhere:
 *
 *   loads here   pd_module_load into a registry of its own: yes, or the loader's message
 *   module ABI   from its pdext_module_info block (read even when the load is refused: the
 *                library opened lazily, the entry point called, nothing registered)
 *   built by     the SDK version and compiler recorded in that block
 *   ops          each op with its kind and, for forward ops whose attrs all have defaults,
 *                the dtypes a [3, 4] run takes (as `pdext check` finds them)
 *   GPU code     the architectures in its CUDA fat binary (.nv_fatbin): SASS sm_XX, PTX
 *   needs        its DT_NEEDED libraries and RUNPATH
 *   undefined    how many symbols it takes from elsewhere, and those nothing here provides
 *
 * The ELF is read directly (<elf.h>, 64-bit little-endian), so a library that cannot be
 * opened is still described.
 */
#include "pdext_check.h"
#include "pdext_cmd.h"

#include <dlfcn.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: pdext explain LIB.so\n"
    "\n"
    "Describes an op library: whether this runtime can load it (and if not, why), the\n"
    "module ABI and SDK that built it, its ops (with the dtypes a run takes, where known),\n"
    "the GPU architectures of its CUDA code, the libraries it needs, and its undefined\n"
    "symbols, naming those nothing here provides.\n";

/* The file's bytes and its section headers, when it is a 64-bit ELF. */
typedef struct elf_file {
    unsigned char *data;
    size_t size;
    const Elf64_Ehdr *eh;
    const Elf64_Shdr *sh;
} elf_file;

static bool elf_open(const char *path, elf_file *f)
{
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return false;
    if (fseek(fp, 0, SEEK_END) == 0) {
        long n = ftell(fp);
        if (n > (long)sizeof(Elf64_Ehdr) && fseek(fp, 0, SEEK_SET) == 0 &&
            (f->data = malloc((size_t)n)) != NULL) {
            f->size = fread(f->data, 1, (size_t)n, fp);
        }
    }
    fclose(fp);
    if (f->data == NULL || f->size < sizeof(Elf64_Ehdr))
        return false;
    f->eh = (const Elf64_Ehdr *)f->data;
    if (memcmp(f->eh->e_ident, ELFMAG, SELFMAG) != 0 || f->eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        f->eh->e_shoff == 0 || f->eh->e_shentsize != sizeof(Elf64_Shdr) ||
        f->eh->e_shoff + (uint64_t)f->eh->e_shnum * sizeof(Elf64_Shdr) > f->size)
        return false;
    f->sh = (const Elf64_Shdr *)(f->data + f->eh->e_shoff);
    return true;
}

/* Section `i`'s bytes, or NULL when they lie outside the file. */
static const unsigned char *section_data(const elf_file *f, size_t i, size_t *size)
{
    const Elf64_Shdr *s = &f->sh[i];
    if (s->sh_type == SHT_NOBITS || s->sh_offset + s->sh_size > f->size)
        return NULL;
    *size = s->sh_size;
    return f->data + s->sh_offset;
}

static const char *section_name(const elf_file *f, size_t i)
{
    size_t n = 0;
    const unsigned char *names = f->eh->e_shstrndx < f->eh->e_shnum
                                     ? section_data(f, f->eh->e_shstrndx, &n)
                                     : NULL;
    return names && f->sh[i].sh_name < n ? (const char *)names + f->sh[i].sh_name : "";
}

/* The SASS and PTX architectures of the CUDA fat binaries in .nv_fatbin (the layout nvcc
 * writes: a 16-byte header with magic 0xBA55ED50 and the size of its entries, each entry a
 * header with its kind (1 PTX, 2 ELF), header size, payload size and sm version). */
static void gpu_archs(const elf_file *f, pd_cmd_strv *out)
{
    for (size_t i = 0; i < f->eh->e_shnum; ++i) {
        size_t n = 0;
        const unsigned char *d = strcmp(section_name(f, i), ".nv_fatbin") == 0
                                     ? section_data(f, i, &n)
                                     : NULL;
        for (size_t at = 0; d && at + 16 <= n;) {
            uint32_t magic;
            uint16_t header;
            uint64_t body;
            memcpy(&magic, d + at, 4);
            memcpy(&header, d + at + 6, 2);
            memcpy(&body, d + at + 8, 8);
            if (magic != 0xBA55ED50u || header < 16 || at + header + body > n)
                break;
            for (size_t e = at + header; e + 32 <= at + header + body;) {
                uint16_t kind;
                uint32_t eheader, sm;
                uint64_t payload;
                memcpy(&kind, d + e, 2);
                memcpy(&eheader, d + e + 4, 4);
                memcpy(&payload, d + e + 8, 8);
                memcpy(&sm, d + e + 28, 4);
                if (eheader < 32 || eheader + payload == 0)
                    break;
                char name[48];
                snprintf(name, sizeof name, "%s_%u (%s)", kind == 1 ? "compute" : "sm", sm,
                         kind == 1 ? "PTX" : "SASS");
                bool have = false;
                for (int32_t k = 0; k < out->n && !have; ++k)
                    have = strcmp(out->v[k], name) == 0;
                if (!have)
                    pd_cmd_strv_add(out, name);
                e += eheader + payload;
            }
            at += header + body;
        }
    }
}

/* DT_NEEDED and DT_RUNPATH / DT_RPATH of the dynamic section; the undefined symbols of
 * .dynsym (weak ones apart: nothing is missing when they are absent). */
static void dynamic_info(const elf_file *f, pd_cmd_strv *needed, char *runpath, size_t cap,
                         pd_cmd_strv *undefined)
{
    runpath[0] = '\0';
    for (size_t i = 0; i < f->eh->e_shnum; ++i) {
        const Elf64_Shdr *s = &f->sh[i];
        size_t n = 0, ns = 0;
        if ((s->sh_type != SHT_DYNAMIC && s->sh_type != SHT_DYNSYM) || s->sh_link >= f->eh->e_shnum)
            continue;
        const unsigned char *d = section_data(f, i, &n);
        const char *str = (const char *)section_data(f, s->sh_link, &ns);
        if (d == NULL || str == NULL)
            continue;
        if (s->sh_type == SHT_DYNAMIC) {
            for (size_t k = 0; (k + 1) * sizeof(Elf64_Dyn) <= n; ++k) {
                const Elf64_Dyn *e = (const Elf64_Dyn *)d + k;
                if (e->d_tag == DT_NULL)
                    break;
                if (e->d_un.d_val >= ns)
                    continue;
                if (e->d_tag == DT_NEEDED)
                    pd_cmd_strv_add(needed, str + e->d_un.d_val);
                else if (e->d_tag == DT_RUNPATH || e->d_tag == DT_RPATH)
                    snprintf(runpath, cap, "%s", str + e->d_un.d_val);
            }
        } else {
            for (size_t k = 1; (k + 1) * sizeof(Elf64_Sym) <= n; ++k) {
                const Elf64_Sym *sym = (const Elf64_Sym *)d + k;
                if (sym->st_shndx == SHN_UNDEF && sym->st_name != 0 && sym->st_name < ns &&
                    ELF64_ST_BIND(sym->st_info) != STB_WEAK)
                    pd_cmd_strv_add(undefined, str + sym->st_name);
            }
        }
    }
}

static void print_list(const char *label, const pd_cmd_strv *v, const char *none)
{
    printf("%-12s ", label);
    if (v->n == 0)
        printf("%s", none);
    for (int32_t i = 0; i < v->n; ++i)
        printf("%s%s", i ? ", " : "", v->v[i]);
    printf("\n");
}

static void keep_dtypes(void *user, const pd_check_row *row) { *(uint32_t *)user = row->dtypes; }

/* The dtypes a [3, 4] run of a forward op takes (every attr must have a default), as `pdext
 * check` finds them (its dtypes row); "" when unknown. */
static void op_dtypes(const pd_registry *reg, const pd_op *op, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int32_t k = 0; k < pd_op_attr_count(op); ++k) {
        pd_attr_info info;
        if (pd_op_attr_info(op, k, &info) != PD_OK || !info.has_default)
            return;
    }
    uint32_t taken = 0;
    pd_check_options o = {.struct_size = sizeof o,
                          .dtypes_only = true,
                          .on_row = keep_dtypes,
                          .user = &taken};
    if (pd_check_op(reg, pd_op_name(op), NULL, 0, &o, NULL) != PD_OK)
        return;
    for (int t = 0; t < PD_NUM_DTYPES; ++t)
        if (taken & (1u << t)) {
            size_t used = strlen(buf);
            snprintf(buf + used, cap - used, "%s%s", used ? " " : "",
                     pd_dtype_name((pd_data_type)t));
        }
}

static void print_ops(const pd_registry *reg, const pd_module *m)
{
    static const char *const kinds[] = {"forward", "grad", "double grad"};
    int32_t n = pd_module_op_count(m);
    printf("%-12s %d\n", "ops", (int)n);
    for (int32_t i = 0; i < n; ++i) {
        const pd_op *op = pd_module_op(m, i);
        pd_op_kind kind = pd_op_get_kind(op);
        char dtypes[128] = "";
        if (kind == PD_OP_FORWARD)
            op_dtypes(reg, op, dtypes, sizeof dtypes);
        const char *kind_name = (unsigned)kind < 3 ? kinds[kind] : "?";
        if (kind != PD_OP_FORWARD)
            printf("  %-24s %s\n", pd_op_name(op), kind_name);
        else
            printf("  %-24s %-11s dtypes: %s\n", pd_op_name(op), kind_name,
                   dtypes[0] ? dtypes : "unknown (an attr has no default)");
    }
}

int pd_cmd_explain(int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 1; i < argc; ++i) {
        if (pd_cmd_help(argv[i], usage))
            return PD_CMD_OK;
        if (argv[i][0] == '-')
            return pd_cmd_usage_error("explain", "unknown option '%s'", argv[i]);
        if (path)
            return pd_cmd_usage_error("explain", "give one library, not '%s' too", argv[i]);
        path = argv[i];
    }
    if (path == NULL)
        return pd_cmd_usage_error("explain", "no library given");
    char local[4096];
    if (strchr(path, '/') == NULL) { /* dlopen would search the library path */
        snprintf(local, sizeof local, "./%s", path);
        path = local;
    }
    elf_file f;
    if (!elf_open(path, &f)) {
        free(f.data);
        pd_cmd_error("explain", "%s is not a 64-bit ELF shared library (or cannot be read)", path);
        return PD_CMD_FAILED;
    }
    printf("%-12s %s\n", "library", path);

    pd_registry *reg = NULL;
    pd_module *m = NULL;
    bool loads = pd_registry_create(&reg) == PD_OK && pd_module_load(reg, path, &m) == PD_OK;
    printf("%-12s %s%s\n", "loads here", loads ? "yes" : "no: ", loads ? "" : pd_last_error());

    /* The info block, even when the load was refused (the ABI is often why). */
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    pd_module_entry_fn entry = NULL;
    if (h) /* the POSIX way to take a function from dlsym */
        *(void **)&entry = dlsym(h, PD_MODULE_ENTRY);
    const pd_module_info *info = entry ? entry() : NULL;
    if (info != NULL &&
        info->struct_size >= offsetof(pd_module_info, sdk_version) + sizeof(char *)) {
        printf("%-12s %u.%u (this runtime: %d.%d, pdext %s)\n", "module ABI",
               (unsigned)info->abi_major, (unsigned)info->abi_minor, PD_ABI_MAJOR, PD_ABI_MINOR,
               pd_version());
        bool has_cc = info->struct_size >= offsetof(pd_module_info, compiler) + sizeof(char *);
        printf("%-12s pdext SDK %s%s%s\n", "built by",
               info->sdk_version ? info->sdk_version : "(unknown)",
               has_cc && info->compiler ? ", " : "",
               has_cc && info->compiler ? info->compiler : "");
    } else {
        printf("%-12s %s\n", "module ABI",
               h == NULL ? dlerror() : "none: no pdext_module_info (not a pdext op library)");
    }
    if (loads)
        print_ops(reg, m);

    pd_cmd_strv archs = {0}, needed = {0}, undefined = {0}, missing = {0};
    char runpath[1024];
    gpu_archs(&f, &archs);
    dynamic_info(&f, &needed, runpath, sizeof runpath, &undefined);
    print_list("GPU code", &archs, "none (no CUDA fat binary: CPU code only)");
    print_list("needs", &needed, "(no libraries)");
    if (runpath[0])
        printf("%-12s %s\n", "runpath", runpath);
    for (int32_t i = 0; h && i < undefined.n; ++i)
        if (dlsym(h, undefined.v[i]) == NULL)
            pd_cmd_strv_add(&missing, undefined.v[i]);
    printf("%-12s %d symbol%s from other libraries; ", "undefined", (int)undefined.n,
           undefined.n == 1 ? "" : "s");
    if (h == NULL)
        printf("not checked (the library does not open here)\n");
    else if (missing.n == 0)
        printf("all provided here\n");
    else
        for (int32_t i = 0; i < missing.n; ++i)
            printf("%s%s", i ? ", " : "missing here: ", missing.v[i]);
    if (h && missing.n > 0)
        printf("\n");
    pd_cmd_strv_free(&archs);
    pd_cmd_strv_free(&needed);
    pd_cmd_strv_free(&undefined);
    pd_cmd_strv_free(&missing);
    /* the registry first: its modules' code must still be mapped while it is destroyed */
    pd_registry_destroy(reg);
    if (h)
        dlclose(h);
    free(f.data);
    return loads ? PD_CMD_OK : PD_CMD_FAILED;
}
