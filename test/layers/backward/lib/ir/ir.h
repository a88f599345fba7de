/* ir.h — the lower layer of this test tree. */
