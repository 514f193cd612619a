/* Makes a kerntune wgpu worker process fail at start as a real one would when it cannot open
   its device: a line on stderr, exit status 1. The tuner (no KERNTUNE_WGPU_WORKER) runs on. */
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void no_worker(void) {
  if (getenv("KERNTUNE_WGPU_WORKER")) {
    fprintf(stderr, "error: no Vulkan adapter at ordinal 0 (this node's GPU is held by another job)\n");
    exit(1);
  }
}
