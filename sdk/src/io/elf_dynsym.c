/*
 * elf_dynsym.c - the dynamic symbol table of a shared library's file (elf_dynsym.h).
 */
#include "io/elf_dynsym.h"

#include <string.h>

const void *pd__elf_at(const pd__elf *e, uint64_t off, uint64_t size)
{
    return off <= e->len && size <= e->len - off ? e->data + off : NULL;
}

const char *pd__elf_str(const pd__elf *e, uint64_t off)
{
    if (e->strs == NULL || off >= e->strs_len ||
        memchr(e->strs + off, '\0', e->strs_len - off) == NULL)
        return NULL;
    return e->strs + off;
}

bool pd__elf_open(pd__elf *e, const void *data, size_t len)
{
    memset(e, 0, sizeof *e);
    e->data = data;
    e->len = len;
    const Elf64_Ehdr *eh = pd__elf_at(e, 0, sizeof *eh);
    if (eh == NULL || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
        eh->e_shentsize != sizeof(Elf64_Shdr))
        return false;
    const Elf64_Shdr *sh = pd__elf_at(e, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr));
    if (sh == NULL)
        return false;
    for (size_t i = 0; i < eh->e_shnum; ++i) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        const Elf64_Sym *syms = pd__elf_at(e, sh[i].sh_offset, sh[i].sh_size);
        const char *strs = pd__elf_at(e, str->sh_offset, str->sh_size);
        if (syms == NULL || strs == NULL || str->sh_size == 0)
            return false;
        e->eh = eh;
        e->sh = sh;
        e->syms = syms;
        e->n_syms = sh[i].sh_size / sizeof(Elf64_Sym);
        e->dynsym_index = i;
        e->strs = strs;
        e->strs_len = str->sh_size;
        return true;
    }
    return false;
}
