# ELF symbol index tests and fixtures (see symtab.cmake owner notes)
