/* Round 21: lsx_cas_choose timed on a synthetic 1024 x 1024 system (an AR
 * residual plane, clip 30), best of 300; the hash of the weights checks
 * that a variant of core/ gives the same ones.
 *   cc -O2 -ffp-contract=off -fno-fast-math -Icore -Ithird_party/xxhash \
 *      -o /tmp/t research/r21_choose_time.c core/*.c -lm -lpthread */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lsmix.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(void){
  uint32_t W=1024,H=1024; int16_t *ec=malloc(2*(size_t)W*H);
  uint32_t s=1; double prev=0;
  for(size_t i=0;i<(size_t)W*H;i++){s=s*1664525u+1013904223u; double z=((s>>8)&0xffff)/65536.0-0.5; double v=0.6*prev+z*20+(i>=W? 0.2*ec[i-W]:0); prev=v; ec[i]=(int16_t)v;}
  lsx_cas_plan *pl=malloc(sizeof *pl); lsx_cas_plan_make(pl);
  int64_t *R=malloc(8*LSX_CAS_MAXO); lsx_cas_correlations(pl,ec,W,H,30,2,R);
  lsx_view v; double best=1e9; uint64_t h=0;
  for(int r=0;r<300;r++){memset(&v,0,sizeof v); v.W=W; v.H=H; double t0=now(); int ok=lsx_cas_choose(pl,R,30,(uint64_t)W*(H-1),&v); double t=now()-t0; if(t<best)best=t; if(!ok)return 1;}
  for(int j=0;j<LSX_CAS_NL_MAX;j++) h=h*31+(uint16_t)v.cas_w[j];
  printf("choose best %.3f ms wide=%d hash=%llu\n",best,v.cas_wide,(unsigned long long)h);
  return 0;}
