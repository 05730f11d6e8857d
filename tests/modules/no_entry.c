/* no_entry.c - a shared library that is not a pdext module: no pdext_module_info. */
int tm_no_entry_marker(void) { return 1; }
