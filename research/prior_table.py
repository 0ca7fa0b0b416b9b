# Prints the initial token counts of activity class a = 0..15 (prior weight W)
# used by coder_exp.c prior=W, as a C table (the format would fix this table).
import math, sys
W = int(sys.argv[1]) if len(sys.argv) > 1 else 32
def tok(v):
    if v < 16: return v
    nb = v.bit_length() - 1
    return 16 + (nb - 4) * 4 + ((v >> (nb - 2)) & 3)
print("static const uint8_t ctx_prior[16][64] = {")
for a in range(16):
    thr = math.ceil(128 * (2 ** (a / 2) - 1)) if a else 0
    mean = 1.0 if a == 0 else thr / 64 * 1.2 + 0.5
    th = mean / (1 + mean); pr = [0.0] * 64
    for v in range(65536):
        p = th ** v * (2 if v else 1)
        if p < 1e-12 and v > 16: break
        pr[tok(v)] += p
    s = sum(pr)
    print("    {" + ", ".join(str(int(W * x / s + 0.5)) for x in pr) + "},")
print("};")
