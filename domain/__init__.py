"""The memory domain: notes, their identifiers and the rules they obey. Pure: no I/O."""
