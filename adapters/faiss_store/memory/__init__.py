"""The FAISS store's contents in memory: note and link tables, vector spaces and their
partitions, damage, the state and the search over it. Knows the record formats, no file."""
