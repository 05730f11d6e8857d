/*
 * aot_elf.c - what the MindSpore AOT adapter reads from a library's file before it trusts it:
 * that it is an ELF shared object, which libstdc++ string ABI it was built with, whether it
 * calls the CUDA runtime (a GPU kernel: it refers to cuda* functions it does not define, or
 * carries device code, a .nv_fatbin section, as nvcc's output with the runtime linked
 * statically does) or
 * launches on the simulated device (pd_sim_launch: a sim kernel, for tests and plug-in
 * authors), and
 * (for the message when a function is missing) which functions it exports.
 *
 * The ABI. Attr names reach AotExtra as std::string, whose layout differs between libstdc++'s
 * two ABIs. Each leaves traces in the dynamic symbol table when the library touches
 * std::string: the new one (the default since GCC 5) names std::__cxx11 ("NSt7__cxx11..."),
 * though an optimizing compiler may inline all of a short string's code and leave none; the
 * old one, which MindSpore builds kernels with (-D_GLIBCXX_USE_CXX11_ABI=0), is the
 * copy-on-write std::string ("_ZNSs...", "_ZNKSs..."), whose constructors and _Rep are never
 * inline, so an old-ABI library that builds a string always refers to them. Hence: "__cxx11"
 * means new; else an old-ABI string symbol means old; else new (what every compiler now
 * defaults to; a library that never builds a string works with either).
 */
#include "adapters/mindspore/aot_load.h"
#include "io/elf_dynsym.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A mapped file and its dynamic symbols (none if the file has no table). */
typedef struct elf_file {
    void *map;
    size_t size;
    pd__elf dyn;
} elf_file;

static const char *sym_name(const elf_file *f, const Elf64_Sym *s)
{
    const char *n = pd__elf_str(&f->dyn, s->st_name);
    return n ? n : "";
}

static pd_status elf_open(const char *who, const char *path, elf_file *f)
{
    memset(f, 0, sizeof *f);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pd__fail(errno == ENOENT ? PD_ERR_NOT_FOUND : PD_ERR_IO,
                        "%s: cannot open library '%s': %s", who, path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: '%s' is not an ELF shared library (too small or not a file)", who,
                        path);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return pd__fail(PD_ERR_IO, "%s: cannot read '%s': %s", who, path, strerror(errno));
    f->map = map;
    f->size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = map;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
        munmap(map, f->size);
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: '%s' is not an ELF shared library (no ELF header); give a .so built "
                        "with -shared -fPIC, or a .cc/.cpp/.c source",
                        who, path);
    }
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_DYN) {
        munmap(map, f->size);
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: '%s' is an ELF file but not a 64-bit shared library", who, path);
    }
    (void)pd__elf_open(&f->dyn, map, f->size); /* a library without dynamic symbols has none */
    return PD_OK;
}

static void elf_close(elf_file *f) { munmap(f->map, f->size); }

/* Whether the library has a section named `name` (every read bounds-checked). */
static bool has_section(const elf_file *f, const char *name)
{
    const pd__elf *e = &f->dyn;
    if (e->eh == NULL || e->sh == NULL || e->eh->e_shstrndx >= e->eh->e_shnum)
        return false;
    const Elf64_Shdr *names = &e->sh[e->eh->e_shstrndx];
    size_t want = strlen(name) + 1;
    for (size_t i = 0; i < e->eh->e_shnum; ++i) {
        uint64_t at = e->sh[i].sh_name;
        if (at >= names->sh_size || names->sh_size - at < want)
            continue;
        const char *s = pd__elf_at(e, names->sh_offset + at, want);
        if (s != NULL && memcmp(s, name, want) == 0)
            return true;
    }
    return false;
}

pd_status pd_aoti_elf_abi(const char *who, const char *path, bool *cxx11, bool *cuda, bool *sim)
{
    elf_file f;
    pd_status s = elf_open(who, path, &f);
    if (s != PD_OK)
        return s;
    bool new_abi = false, old_abi = false;
    *cuda = false;
    *sim = false;
    for (size_t i = 1; i < f.dyn.n_syms; ++i) {
        const char *n = sym_name(&f, &f.dyn.syms[i]);
        if (f.dyn.syms[i].st_shndx == SHN_UNDEF && strncmp(n, "cuda", 4) == 0)
            *cuda = true; /* the CUDA runtime API: cudaLaunchKernel, cudaMemcpyAsync, ... */
        if (f.dyn.syms[i].st_shndx == SHN_UNDEF && strcmp(n, "pd_sim_launch") == 0)
            *sim = true; /* a kernel of the simulated device (pd_sim_device.h) */
        new_abi = new_abi || strstr(n, "__cxx11") != NULL;
        old_abi = old_abi || strncmp(n, "_ZNSs", 5) == 0 || strncmp(n, "_ZNKSs", 6) == 0 ||
                  strstr(n, "Ss4_Rep") != NULL;
    }
    *cuda = *cuda || has_section(&f, ".nv_fatbin");
    elf_close(&f);
    *cxx11 = new_abi || !old_abi;
    return PD_OK;
}

void pd_aoti_elf_similar(const char *path, const char *name, char *buf, size_t cap)
{
    buf[0] = '\0';
    elf_file f;
    if (elf_open("", path, &f) != PD_OK)
        return; /* the caller sets its own message after this */
    enum { KEEP = 5 };
    const char *best[KEEP] = {0};
    int score[KEEP] = {0};
    int limit = (int)strlen(name) / 3 + 2;
    for (size_t i = 1; i < f.dyn.n_syms; ++i) {
        const Elf64_Sym *s = &f.dyn.syms[i];
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF ||
            ELF64_ST_VISIBILITY(s->st_other) != STV_DEFAULT)
            continue;
        const char *n = sym_name(&f, s);
        size_t dist = pd__edit_distance(n, name, true);
        int d = dist > 1000 ? 1000 : (int)dist;
        if (d > limit && !(strlen(n) > 2 && (strstr(n, name) || strstr(name, n))))
            continue;
        if (d > limit)
            d = limit + 1;
        for (int k = 0; k < KEEP; ++k) {
            if (best[k] == NULL || d < score[k]) {
                for (int j = KEEP - 1; j > k; --j) {
                    best[j] = best[j - 1];
                    score[j] = score[j - 1];
                }
                best[k] = n;
                score[k] = d;
                break;
            }
        }
    }
    size_t len = 0;
    for (int k = 0; k < KEEP && best[k]; ++k) {
        int w = snprintf(buf + len, cap - len, "%s%s", k ? ", " : "", best[k]);
        if (w < 0 || (size_t)w >= cap - len)
            break;
        len += (size_t)w;
    }
    elf_close(&f);
}

const char *pd_aoti_elf_not_code(const char *path, const char *name)
{
    elf_file f;
    if (elf_open("", path, &f) != PD_OK)
        return NULL; /* dlopen read it: a failure here is not this check's to report */
    const char *kind = NULL;
    for (size_t i = 1; i < f.dyn.n_syms && kind == NULL; ++i) {
        const Elf64_Sym *s = &f.dyn.syms[i];
        if (s->st_shndx == SHN_UNDEF || strcmp(sym_name(&f, s), name) != 0)
            continue;
        switch (ELF64_ST_TYPE(s->st_info)) {
        case STT_FUNC:
        case STT_GNU_IFUNC: i = f.dyn.n_syms; break; /* code: the first definition wins */
        case STT_OBJECT: kind = "a data object"; break;
        case STT_TLS: kind = "a thread-local variable"; break;
        case STT_COMMON: kind = "a common (data) symbol"; break;
        default: kind = "a symbol that is not a function"; break;
        }
    }
    elf_close(&f);
    return kind;
}
