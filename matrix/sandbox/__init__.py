"""The sandbox: a standard-library-only package that the executor runs by path
(``python -s -B matrix/sandbox``, see ``__main__.py``), one module per job. Importing it has no
side effects; the parent imports its records, wire format and encoding."""
