/*
 * jit_stubs.c - stubs for the functions a C++ module declares and calls but that nothing
 * defines: a Paddle-style .cc whose GPU half (relu_cuda_forward, ...) lives in a .cu that
 * this build did not compile. Unchanged sources cannot make such a reference weak, and a
 * shared library links with it unresolved; the loader would then refuse the module (or, bound
 * lazily, kill the process at the first call). Instead, after a successful link the JIT reads
 * the library's undefined dynamic symbols, keeps the C++ functions among them that no library
 * it needs (nor the host) provides, and when there are any links it once more with a stub for
 * each (missing/pd_missing.cc, object obj/pd_missing.o): the module loads, its CPU path works,
 * and a call of a missing function throws a C++ exception naming it, which the module's invoke
 * hook turns into the op's error.
 *
 * Which symbols. Only C++ functions (mangled "_Z" names that PLT slots call: JUMP_SLOT
 * relocations), never data, vtables or typeinfo (_ZT*, _ZGV*), and only when every library
 * the module needs (DT_NEEDED) can be opened here: otherwise nothing is stubbed and the
 * loader's own message stands. A host that defines such a function still wins: the stubs come
 * after the host's symbols in the dynamic linker's search order.
 *
 * ELF64 little-endian only (x86-64 and AArch64); other files are left as they are.
 */
#include "jit_internal.h"

#include "io/elf_dynsym.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* Whether symbol `i` is called through a PLT slot (a JUMP_SLOT relocation). */
static bool called_through_plt(const pd__elf *e, size_t i)
{
    const Elf64_Ehdr *eh = e->eh;
    uint32_t jump_slot = eh->e_machine == EM_X86_64    ? R_X86_64_JUMP_SLOT
                         : eh->e_machine == EM_AARCH64 ? R_AARCH64_JUMP_SLOT
                                                       : 0;
    const Elf64_Shdr *sh = e->sh;
    for (size_t s = 0; jump_slot != 0 && s < eh->e_shnum; ++s) {
        if (sh[s].sh_type != SHT_RELA || sh[s].sh_link != e->dynsym_index)
            continue;
        const Elf64_Rela *r = pd__elf_at(e, sh[s].sh_offset, sh[s].sh_size);
        for (size_t k = 0; r != NULL && k < sh[s].sh_size / sizeof(Elf64_Rela); ++k)
            if (ELF64_R_SYM(r[k].r_info) == i && ELF64_R_TYPE(r[k].r_info) == jump_slot)
                return true;
    }
    return false;
}

/* Opens every DT_NEEDED library of the file (their handles into *handles); false when one
 * cannot be opened here. */
static bool open_needed(const pd__elf *e, void ***handles, int32_t *n)
{
    const Elf64_Shdr *sh = e->sh;
    const Elf64_Ehdr *eh = e->eh;
    *handles = NULL;
    *n = 0;
    for (size_t s = 0; s < eh->e_shnum; ++s) {
        if (sh[s].sh_type != SHT_DYNAMIC)
            continue;
        const Elf64_Dyn *d = pd__elf_at(e, sh[s].sh_offset, sh[s].sh_size);
        for (size_t k = 0; d != NULL && k < sh[s].sh_size / sizeof(Elf64_Dyn); ++k) {
            if (d[k].d_tag != DT_NEEDED)
                continue;
            const char *lib = pd__elf_str(e, d[k].d_un.d_val);
            void *h = lib ? dlopen(lib, RTLD_LAZY | RTLD_LOCAL) : NULL;
            void **grown = h ? realloc(*handles, sizeof(void *) * (size_t)(*n + 1)) : NULL;
            if (grown == NULL) {
                if (h)
                    dlclose(h);
                return false;
            }
            *handles = grown;
            (*handles)[(*n)++] = h;
        }
    }
    return true;
}

/* Whether `name` is defined by the host process or one of the libraries. */
static bool provided(const char *name, void **handles, int32_t n)
{
    if (dlsym(RTLD_DEFAULT, name) != NULL)
        return true;
    for (int32_t i = 0; i < n; ++i)
        if (dlsym(handles[i], name) != NULL)
            return true;
    return false;
}

/* A mangled C++ function name (not a vtable, typeinfo, guard variable or thunk). */
static bool cxx_function_name(const char *name)
{
    return strncmp(name, "_Z", 2) == 0 && strncmp(name, "_ZT", 3) != 0 &&
           strncmp(name, "_ZGV", 4) != 0;
}

/* The stub source for the missing functions, "\n"-separated in `names`. */
static void stub_source(pd__sb *out, const pd__plan *p, const pd__strv *names)
{
    pd__sb_addf(out,
                "// pd_missing.cc - written by the pdext JIT (jit/jit_stubs.c) for module '%s':\n"
                "// stubs for functions its code calls that no source of the module defines and\n"
                "// no library provides. Each throws when called, naming the function.\n"
                "#include <cstdlib>\n#include <cxxabi.h>\n#include <stdexcept>\n#include <string>\n"
                "namespace {\n"
                "[[noreturn]] void pd_missing(const char *mangled)\n{\n"
                "    int status = 0;\n"
                "    char *d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);\n"
                "    std::string name = d ? d : mangled;\n"
                "    std::free(d);\n"
                "    throw std::runtime_error(name + \" is declared but not built into module "
                "'%s': no source of the module defines it (a GPU function whose .cu source was "
                "not compiled? add that source, with nvcc installed)\");\n"
                "}\n} // namespace\n",
                p->name, p->name);
    for (int32_t i = 0; i < names->n; ++i)
        pd__sb_addf(out,
                    "extern \"C\" [[noreturn]] void pd_missing_%d() __asm__(\"%s\");\n"
                    "extern \"C\" void pd_missing_%d() { pd_missing(\"%s\"); }\n",
                    (int)i, names->v[i], (int)i, names->v[i]);
}

/* The missing C++ functions of the linked library into *names (empty: none, or the library
 * cannot be examined). */
static void find_missing(const char *lib, pd__strv *names)
{
    size_t len = 0;
    char *bytes = pd__read_file(lib, &len);
    pd__elf e;
    void **handles = NULL;
    int32_t n = 0;
    if (bytes != NULL && pd__elf_open(&e, bytes, len) && open_needed(&e, &handles, &n)) {
        for (size_t i = 1; i < e.n_syms; ++i) {
            const Elf64_Sym *s = &e.syms[i];
            const char *name = pd__elf_str(&e, s->st_name);
            if (s->st_shndx != SHN_UNDEF || ELF64_ST_BIND(s->st_info) != STB_GLOBAL ||
                name == NULL || !cxx_function_name(name) || strchr(name, '"') != NULL ||
                !called_through_plt(&e, i) || provided(name, handles, n))
                continue;
            pd__strv_add(names, name);
        }
    }
    for (int32_t i = 0; i < n; ++i)
        dlclose(handles[i]);
    free(handles);
    free(bytes);
}

pd_status pd__stubs_write(const pd__plan *p, bool *needed)
{
    *needed = false;
    if (p->kind != PD_JIT_SHARED || !(p->uses[PD__LANG_CXX] || p->uses[PD__LANG_CUDA]))
        return PD_OK;
    pd__sb lib = {0}, dir = {0}, path = {0}, text = {0};
    pd__strv names = {0};
    pd__sb_addf(&lib, "%s/out/lib%s.so", p->build_dir, p->name);
    pd__sb_addf(&dir, "%s/missing", p->build_dir);
    pd__sb_addf(&path, "%s/missing/pd_missing.cc", p->build_dir);
    pd_status s = lib.oom || dir.oom || path.oom
                      ? pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who)
                      : PD_OK;
    if (s == PD_OK)
        find_missing(lib.s, &names);
    if (s == PD_OK && names.oom)
        s = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who);
    if (s == PD_OK && names.n > 0) {
        stub_source(&text, p, &names);
        s = text.oom ? pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who)
                     : pd__mkdirs(p->who, dir.s, NULL);
        if (s == PD_OK)
            s = pd__write_atomic(p->who, path.s, text.s, strlen(text.s), 0600);
        if (s == PD_OK) {
            *needed = true;
            pd__jit_log(p,
                        "pdext: module '%s' calls %d C++ function%s that no source defines (the "
                        "first: %s); linking stubs that fail when called",
                        p->name, (int)names.n, names.n == 1 ? "" : "s", names.v[0]);
        }
    }
    pd__strv_free(&names);
    pd__sb_free(&text);
    pd__sb_free(&path);
    pd__sb_free(&dir);
    pd__sb_free(&lib);
    return s;
}
