// Records what a real GPU's warp collectives return, for tests/warp_truth.rs.
//
// Build and run on a machine with an NVIDIA GPU of compute capability 8.0 or
// later (the `__reduce_*_sync` intrinsics need it):
//
//     nvcc -O2 -arch=native -o warp_truth tests/data/warp_truth.cu
//     ./warp_truth > tests/data/warp_truth.txt
//
// Each case is one warp of 32 lanes running one collective. Lanes outside the
// case's mask skip the call (as CUDA requires of lanes not named in a mask);
// every lane of the mask passes the same mask and width. The cases are drawn
// from a fixed seed, so a rerun on the same hardware writes the same file.
//
// One line per case, fields separated by single spaces:
//
//     <op> <width> <mask> <in> <arg> <out>
//
// - `op`: shfl, up, down, xor, ballot, any, all, match_any, match_all,
//   add_u, min_u, max_u, add_i, min_i, max_i, and, or, xor_r
// - `width`: the shuffles' width (32 for the other operations)
// - `mask`: the lanes taking part, in hex
// - `in`: each lane's value as a 32-bit pattern, 32 comma-separated unsigned
//   decimals (the votes read `value & 1` as their predicate; the signed
//   reductions read the pattern as an `i32`)
// - `arg`: each lane's `src` / `delta` / `laneMask` for the shuffles, 32
//   comma-separated decimals (zeros for the other operations)
// - `out`: each lane's result, 32 comma-separated entries, `-` for a lane
//   outside the mask; votes and matches in hex, `match_all` as
//   `<mask hex>/<pred>`. Signed reductions print their result as a signed
//   decimal.
//
// Where CUDA leaves a shuffle's result undefined (its source lane is outside
// the mask) the file still holds what the hardware returned: the test decides
// which entries are defined.

#include <cstdio>
#include <cstdint>
#include <cstring>

enum Op {
    SHFL, UP, DOWN, XOR, BALLOT, ANY, ALL, MATCH_ANY, MATCH_ALL,
    ADD_U, MIN_U, MAX_U, ADD_I, MIN_I, MAX_I, AND_R, OR_R, XOR_R, OPS
};

static const char *const NAMES[OPS] = {
    "shfl", "up", "down", "xor", "ballot", "any", "all", "match_any", "match_all",
    "add_u", "min_u", "max_u", "add_i", "min_i", "max_i", "and", "or", "xor_r",
};

struct Case {
    int op;
    int width;
    unsigned mask;
    unsigned in[32];
    unsigned arg[32];
};

struct Result {
    unsigned out[32];
    int pred[32];
};

__global__ void run(const Case *cases, Result *results) {
    const Case &c = cases[blockIdx.x];
    Result &r = results[blockIdx.x];
    unsigned lane = threadIdx.x;
    if (!(c.mask & (1u << lane))) {
        return;
    }
    unsigned v = c.in[lane];
    unsigned a = c.arg[lane];
    unsigned out = 0;
    int pred = 0;
    switch (c.op) {
    case SHFL: out = __shfl_sync(c.mask, v, (int)a, c.width); break;
    case UP: out = __shfl_up_sync(c.mask, v, a, c.width); break;
    case DOWN: out = __shfl_down_sync(c.mask, v, a, c.width); break;
    case XOR: out = __shfl_xor_sync(c.mask, v, (int)a, c.width); break;
    case BALLOT: out = __ballot_sync(c.mask, v & 1); break;
    case ANY: out = __any_sync(c.mask, v & 1); break;
    case ALL: out = __all_sync(c.mask, v & 1); break;
    case MATCH_ANY: out = __match_any_sync(c.mask, v); break;
    case MATCH_ALL: out = __match_all_sync(c.mask, v, &pred); break;
    case ADD_U: out = __reduce_add_sync(c.mask, v); break;
    case MIN_U: out = __reduce_min_sync(c.mask, v); break;
    case MAX_U: out = __reduce_max_sync(c.mask, v); break;
    case ADD_I: out = (unsigned)__reduce_add_sync(c.mask, (int)v); break;
    case MIN_I: out = (unsigned)__reduce_min_sync(c.mask, (int)v); break;
    case MAX_I: out = (unsigned)__reduce_max_sync(c.mask, (int)v); break;
    case AND_R: out = __reduce_and_sync(c.mask, v); break;
    case OR_R: out = __reduce_or_sync(c.mask, v); break;
    case XOR_R: out = __reduce_xor_sync(c.mask, v); break;
    }
    r.out[lane] = out;
    r.pred[lane] = pred;
}

// xorshift64*: the same cases on every run.
static uint64_t state = 0x9e3779b97f4a7c15ull;
static unsigned next(unsigned bound) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return (unsigned)(((state * 0x2545f4914f6cdd1dull) >> 32) % bound);
}

// Masks of every shape the tests care about: the full warp, single lanes,
// ranges, sections of a width, and random subsets.
static unsigned random_mask(int width) {
    switch (next(5)) {
    case 0: return 0xffffffffu;
    case 1: return 1u << next(32);
    case 2: {
        unsigned lo = next(32), len = 1 + next(32 - lo);
        return len == 32 ? 0xffffffffu : ((1u << len) - 1) << lo;
    }
    case 3: {
        // Whole sections of `width` lanes, as a tile would use.
        unsigned m = 0;
        for (int s = 0; s < 32; s += width) {
            if (next(2)) {
                m |= (width == 32 ? 0xffffffffu : ((1u << width) - 1)) << s;
            }
        }
        return m ? m : 0xffffffffu;
    }
    default: {
        unsigned m = 0;
        while (!m) {
            m = (unsigned)next(1u << 16) | ((unsigned)next(1u << 16) << 16);
        }
        return m;
    }
    }
}

int main() {
    const int PER_OP[OPS] = {48, 48, 48, 48, 16, 12, 12, 24, 24, 12, 12, 12, 12, 12, 12, 12, 12, 12};
    int total = 0;
    for (int op = 0; op < OPS; ++op) total += PER_OP[op];
    Case *host = new Case[total];
    int n = 0;
    for (int op = 0; op < OPS; ++op) {
        for (int k = 0; k < PER_OP[op]; ++k, ++n) {
            Case &c = host[n];
            memset(&c, 0, sizeof c);
            c.op = op;
            c.width = op <= XOR ? 1 << next(6) : 32;
            c.mask = random_mask(c.width);
            for (int l = 0; l < 32; ++l) {
                switch (op) {
                case MATCH_ANY: case MATCH_ALL:
                    // Few distinct values, and now and then one value for all.
                    c.in[l] = k % 4 == 0 ? 7 : next(3);
                    break;
                case BALLOT: case ANY: case ALL:
                    c.in[l] = k % 4 == 0 ? 1 : k % 4 == 1 ? 0 : next(2);
                    break;
                case ADD_U: case ADD_I:
                    c.in[l] = k % 2 ? 0x7fffffffu + next(4) : next(1000);
                    break;
                case MIN_I: case MAX_I:
                    c.in[l] = (unsigned)((int)next(2000) - 1000);
                    break;
                default:
                    c.in[l] = next(1u << 16) | ((unsigned)l << 24);
                }
                switch (op) {
                case SHFL: c.arg[l] = next(3) ? next(32) : next(64); break;
                case UP: case DOWN: c.arg[l] = next(3) ? next(c.width + 1) : next(64); break;
                case XOR: c.arg[l] = next(3) ? next(c.width) : next(64); break;
                default: c.arg[l] = 0;
                }
            }
        }
    }
    Case *dcases;
    Result *dresults;
    cudaMalloc(&dcases, sizeof(Case) * total);
    cudaMalloc(&dresults, sizeof(Result) * total);
    cudaMemcpy(dcases, host, sizeof(Case) * total, cudaMemcpyHostToDevice);
    cudaMemset(dresults, 0, sizeof(Result) * total);
    run<<<total, 32>>>(dcases, dresults);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        fprintf(stderr, "warp_truth: %s\n", cudaGetErrorString(err));
        return 1;
    }
    Result *res = new Result[total];
    cudaMemcpy(res, dresults, sizeof(Result) * total, cudaMemcpyDeviceToHost);
    for (int i = 0; i < total; ++i) {
        const Case &c = host[i];
        printf("%s %d %x ", NAMES[c.op], c.width, c.mask);
        for (int l = 0; l < 32; ++l) printf(l ? ",%u" : "%u", c.in[l]);
        printf(" ");
        for (int l = 0; l < 32; ++l) printf(l ? ",%u" : "%u", c.arg[l]);
        printf(" ");
        for (int l = 0; l < 32; ++l) {
            if (l) printf(",");
            if (!(c.mask & (1u << l))) {
                printf("-");
                continue;
            }
            unsigned o = res[i].out[l];
            switch (c.op) {
            case BALLOT: case MATCH_ANY: printf("%x", o); break;
            case MATCH_ALL: printf("%x/%d", o, res[i].pred[l]); break;
            case ADD_I: case MIN_I: case MAX_I: printf("%d", (int)o); break;
            default: printf("%u", o);
            }
        }
        printf("\n");
    }
    return 0;
}
