/*
 * elf_dynsym.h - the dynamic symbol table of a shared library, read from the bytes of its file
 * with every access bounds-checked (a truncated or hostile file gives "no symbols", never a
 * read past the end). ELF64 little-endian only: x86-64 and AArch64. Used by the JIT (stubs for
 * functions a module calls but nothing defines) and by the MindSpore AOT adapter (string ABI,
 * device kernels, similar names).
 */
#ifndef PD_IO_ELF_DYNSYM_H
#define PD_IO_ELF_DYNSYM_H

#include "pd_internal.h"

#include <elf.h>

typedef struct pd__elf {
    const unsigned char *data; /* the file's bytes (the caller's, mapped or read) */
    size_t len;
    const Elf64_Ehdr *eh;
    const Elf64_Shdr *sh;  /* eh->e_shnum section headers */
    const Elf64_Sym *syms; /* .dynsym */
    size_t n_syms;
    size_t dynsym_index; /* its section's index (relocation sections link to it) */
    const char *strs;    /* its string table */
    size_t strs_len;
} pd__elf;

/* Reads the headers and finds .dynsym over `len` bytes at `data`; false (and no symbols) for
 * anything that is not an ELF64 little-endian file with a dynamic symbol table. */
PD__SIBLING_API bool pd__elf_open(pd__elf *e, const void *data, size_t len);
/* `size` bytes at file offset `off`, or NULL when they are not all inside the file. */
PD__SIBLING_API const void *pd__elf_at(const pd__elf *e, uint64_t off, uint64_t size);
/* The NUL-terminated string at `off` of the dynamic string table, or NULL. */
PD__SIBLING_API const char *pd__elf_str(const pd__elf *e, uint64_t off);

#endif
