#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <time.h>
static size_t N; static char *src;
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
typedef struct {int fd; char *dst; size_t off, len;} job;
static void *pw(void *a){job *j=a; size_t d=0; while(d<j->len){ssize_t r=pwrite(j->fd,src+j->off+d,j->len-d,j->off+d); if(r<=0){perror("pwrite");exit(1);} d+=r;} return 0;}
static void *mc(void *a){job *j=a; memcpy(j->dst+j->off,src+j->off,j->len); return 0;}
static double run(int mode,int threads){
  int fd=memfd_create("b",0); char *dst=0;
  double t=now();
  if(mode){ if(ftruncate(fd,N)){perror("ftruncate");exit(1);} dst=mmap(0,N,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0); if(dst==MAP_FAILED){perror("mmap");exit(1);} }
  pthread_t th[64]; job js[64]; size_t per=N/threads;
  for(int k=0;k<threads;k++){js[k]=(job){fd,dst,k*per,k==threads-1?N-k*per:per}; pthread_create(&th[k],0,mode?mc:pw,&js[k]);}
  for(int k=0;k<threads;k++) pthread_join(th[k],0);
  if(mode) munmap(dst,N);
  double e=now()-t; close(fd); return e;
}
int main(int c,char**v){
  N=(size_t)atof(v[1])*(1<<30); src=malloc(N); for(size_t i=0;i<N;i+=4096) memset(src+i,(int)i,4096);
  int ts[]={1,8,16};
  for(int r=0;r<3;r++){ for(int m=0;m<2;m++) for(int k=0;k<3;k++) printf("%s %2d threads: %.3f s\n",m?"mmap  ":"pwrite",ts[k],run(m,ts[k])); printf("\n"); }
}
