#!/bin/sh
# The example with the memory check off (as before it existed).
KERNTUNE_COMPILE_MEMORY_CHECK=0 exec "$(dirname "$0")/../../../target/release/examples/compile_memory" "$@"
