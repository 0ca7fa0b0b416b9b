/* Research round 35 (research/README.md): the image stream of a frame
 * whole against its two column halves as independent lsmix streams, and
 * the predictor set each picks (header byte 22), with today's encoder.
 *   gcc -O2 -Icore -o /tmp/r35_split research/r35_split.c build/lib/libaurcore.a -lm -lpthread
 *   /tmp/r35_split FRAME.fits DATA_OFFSET W H   (aurorasim frames: 2880 1024 1024) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "aurp.h"
static size_t enc(const unsigned char*be,unsigned w,unsigned h,int*set){
  aurp_params pp; aurp_params_for_profile(&pp,AURP_PROFILE_LSMIX); size_t cap=aurp_image_bound(w,h),len; unsigned char*s=malloc(cap); aurp_error e={{0}};
  if(aurp_image_encode(be,w,h,&pp,2,s,cap,&len,&e)!=AURP_OK){printf("fail %s\n",e.msg);exit(1);}
  *set=s[22]; free(s); return len;
}
int main(int argc,char**argv){
  FILE*f=fopen(argv[1],"rb"); fseek(f,0,SEEK_END); long n=ftell(f); rewind(f);
  unsigned char*b=malloc(n); fread(b,1,n,f); fclose(f);
  long off=atol(argv[2]); unsigned w=atoi(argv[3]),h=atoi(argv[4]);
  struct timespec t0,t1,t2; clock_gettime(CLOCK_MONOTONIC,&t0);
  int s0,s1,s2; size_t whole=enc(b+off,w,h,&s0);
  clock_gettime(CLOCK_MONOTONIC,&t1);
  unsigned wl=w/2, wr=w-wl; unsigned char*L=malloc(2*wl*h),*R=malloc(2*wr*h);
  for(unsigned m=0;m<h;m++){memcpy(L+2*m*wl,b+off+2*(size_t)m*w,2*wl);memcpy(R+2*m*wr,b+off+2*(size_t)m*w+2*wl,2*wr);}
  size_t l=enc(L,wl,h,&s1), r=enc(R,wr,h,&s2);
  clock_gettime(CLOCK_MONOTONIC,&t2);
  double tw=(t1.tv_sec-t0.tv_sec)+1e-9*(t1.tv_nsec-t0.tv_nsec), th=(t2.tv_sec-t1.tv_sec)+1e-9*(t2.tv_nsec-t1.tv_nsec);
  printf("%-40s set %d whole %zu halves %zu+%zu (sets %d %d) %+.3f%%  encode (2 threads) whole %.3f s, halves %.3f s\n",argv[1],s0,whole,l,r,s1,s2,100.0*((double)(l+r)/whole-1),tw,th);
}
