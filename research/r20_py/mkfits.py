import numpy as np, sys
def write_like(src, dst, img):
    b=open(src,'rb').read()
    # header length: find END card
    i=0
    while True:
        blk=b[i:i+2880]; i+=2880
        if any(blk[k:k+8]==b'END     ' for k in range(0,2880,80)): break
    hdr=b[:i]
    data=(img.astype(np.int64)-32768).astype('>i2').tobytes()
    pad=(-len(data))%2880
    open(dst,'wb').write(hdr+data+b'\0'*pad)
