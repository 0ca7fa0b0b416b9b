/* Round 16: a frame coded whole against its two column halves coded as
 * independent lsmix streams (a format where each half has its own models,
 * so that two decoding threads each run a half's chain): the image
 * streams' sizes, and the decode time of the whole stream (2 threads)
 * against the two halves decoded side by side (a thread each), median of
 * R; every half decoded is checked against the frame.  Build like
 * codec_size.c, against core/ or a private copy (r15's patch applied gives
 * the halves with the LS solved every 2nd row):
 *   cc -O2 -ffp-contract=off -Icore -Iresearch -Ithird_party/xxhash \
 *      -o /tmp/halves research/r16_halves.c core/*.c -lm -lpthread
 *   /tmp/halves R FRAME.fits... */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "aurp.h"
#include "lab_io.h"
#include "lsmix.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
typedef struct { const uint8_t *s; size_t len; uint32_t W,H; uint16_t *out; int threads; } job;
static void *run(void *a){ job *j=a; aurp_error e; if(lsx_image_decode(j->s,j->len,j->W,j->H,j->threads,j->out,&e)!=AURP_OK) fprintf(stderr,"decode fail\n"); return NULL; }
static uint8_t *enc(const uint16_t *u, uint32_t W, uint32_t H, size_t *len){ aurp_params p; aurp_params_for_profile(&p,AURP_PROFILE_LSMIX);
  size_t cap=aurp_image_bound(W,H); uint8_t *o=malloc(cap); aurp_error e; if(lsx_image_encode(u,W,H,&p,2,o,cap,len,&e)!=AURP_OK) exit(1); return o; }
int main(int argc,char**argv){ int R=atoi(argv[1]);
 for(int a=2;a<argc;a++){ uint32_t W,H; uint16_t *u=lab_load_fits(argv[a],&W,&H); uint32_t Wl=W/2, Wr=W-Wl;
  uint16_t *l=malloc(2*(size_t)Wl*H), *r=malloc(2*(size_t)Wr*H);
  for(uint32_t m=0;m<H;m++){ memcpy(l+(size_t)m*Wl,u+(size_t)m*W,2*Wl); memcpy(r+(size_t)m*Wr,u+(size_t)m*W+Wl,2*Wr); }
  size_t lw,ll,lr; uint8_t *sw=enc(u,W,H,&lw), *sl=enc(l,Wl,H,&ll), *sr=enc(r,Wr,H,&lr);
  uint16_t *o1=malloc(2*(size_t)W*H), *o2=malloc(2*(size_t)Wl*H), *o3=malloc(2*(size_t)Wr*H);
  double tw[32], th[32];
  for(int i=0;i<R;i++){ job jw={sw,lw,W,H,o1,2}; double t0=now(); run(&jw); tw[i]=now()-t0;
    job j1={sl,ll,Wl,H,o2,1}, j2={sr,lr,Wr,H,o3,1}; pthread_t t; t0=now(); pthread_create(&t,NULL,run,&j1); run(&j2); pthread_join(t,NULL); th[i]=now()-t0; }
  qsort(tw,R,sizeof*tw,cmp); qsort(th,R,sizeof*th,cmp);
  int ok = !memcmp(o2,l,2*(size_t)Wl*H) && !memcmp(o3,r,2*(size_t)Wr*H);
  printf("%-22s set %d/%d/%d  whole %zu  halves %zu+%zu=%zu (%+.3f%%)  decode whole(2t) %.1f ms  halves(1t each) %.1f ms%s\n", strrchr(argv[a],'/')+1, sw[22], sl[22], sr[22], lw, ll, lr, ll+lr, 100.0*((double)(ll+lr)-lw)/lw, 1e3*tw[R/2], 1e3*th[R/2], ok?"":" MISMATCH");
 } return 0; }
