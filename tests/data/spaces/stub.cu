// A stand-in kernel file: these T1 files are for counting search spaces (see README.md).
