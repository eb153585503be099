// Ground truth for the warp collectives: what the hardware returns for
// __shfl*_sync, __ballot_sync, __any_sync, __all_sync, __match_*_sync and
// __reduce_*_sync on one warp, for random masks (full, single lanes, ranges,
// random subsets), widths, deltas and sources. Lanes outside a call's mask
// skip it. tests/warp_truth.rs replays every recorded call on a
// WarpBarrier of 32 lanes and compares lane by lane (skipping the lanes
// whose result CUDA leaves undefined: a shuffle source outside the mask).
//
//   nvcc -O2 -arch=sm_90 -o warp_truth benches/peers/warp_truth.cu
//   ./warp_truth [calls] [seed] > tests/data/warp_truth.txt
//
// Output, one line per call (hex, 32-bit):
//   OP WIDTH ARG MASK SEED: R0 R1 ... R31
// with `-` for a lane outside MASK. Lane l's input is
// (uint32_t)splitmix64(SEED ^ l); the votes use its bit 0, match_any its
// value % 4, match_all its value % 2; match_all records the returned mask
// if `pred`, else 0. WIDTH and ARG are 0 where the call has none.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

enum Op {
    SHFL, SHFL_UP, SHFL_DOWN, SHFL_XOR, BALLOT, ANY, ALL, MATCH_ANY, MATCH_ALL,
    REDUCE_ADD, REDUCE_MIN_U, REDUCE_MAX_U, REDUCE_MIN_I, REDUCE_MAX_I,
    REDUCE_AND, REDUCE_OR, REDUCE_XOR, OPS
};
static const char *NAMES[OPS] = {
    "shfl", "shfl_up", "shfl_down", "shfl_xor", "ballot", "any", "all",
    "match_any", "match_all", "reduce_add", "reduce_min_u", "reduce_max_u",
    "reduce_min_i", "reduce_max_i", "reduce_and", "reduce_or", "reduce_xor"};

static uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct Call {
    int op, width, arg;
    uint32_t mask;
    uint64_t seed;
};

__global__ void run(const Call *calls, const uint32_t *values, uint32_t *out, int n) {
    int lane = threadIdx.x;
    for (int c = 0; c < n; c++) {
        Call k = calls[c];
        uint32_t v = values[c * 32 + lane];
        uint32_t r = 0xdeadbeefu;
        if (k.mask & (1u << lane)) {
            switch (k.op) {
            case SHFL: r = __shfl_sync(k.mask, v, k.arg, k.width); break;
            case SHFL_UP: r = __shfl_up_sync(k.mask, v, k.arg, k.width); break;
            case SHFL_DOWN: r = __shfl_down_sync(k.mask, v, k.arg, k.width); break;
            case SHFL_XOR: r = __shfl_xor_sync(k.mask, v, k.arg, k.width); break;
            case BALLOT: r = __ballot_sync(k.mask, v & 1); break;
            case ANY: r = __any_sync(k.mask, v & 1); break;
            case ALL: r = __all_sync(k.mask, v & 1); break;
            case MATCH_ANY: r = __match_any_sync(k.mask, v % 4); break;
            case MATCH_ALL: {
                int pred = 0;
                r = __match_all_sync(k.mask, v % 2, &pred);
                r = pred ? r : 0;
                break;
            }
            case REDUCE_ADD: r = __reduce_add_sync(k.mask, v); break;
            case REDUCE_MIN_U: r = __reduce_min_sync(k.mask, v); break;
            case REDUCE_MAX_U: r = __reduce_max_sync(k.mask, v); break;
            case REDUCE_MIN_I: r = (uint32_t)__reduce_min_sync(k.mask, (int)v); break;
            case REDUCE_MAX_I: r = (uint32_t)__reduce_max_sync(k.mask, (int)v); break;
            case REDUCE_AND: r = __reduce_and_sync(k.mask, v); break;
            case REDUCE_OR: r = __reduce_or_sync(k.mask, v); break;
            case REDUCE_XOR: r = __reduce_xor_sync(k.mask, v); break;
            }
        }
        out[c * 32 + lane] = r;
    }
}

static uint32_t random_mask(uint64_t r) {
    switch (r % 4) {
    case 0: return 0xffffffffu;
    case 1: return 1u << ((r >> 8) % 32);
    case 2: {
        int lo = (r >> 8) % 32, len = 1 + (r >> 16) % (32 - lo);
        return (uint32_t)((((uint64_t)1 << len) - 1) << lo);
    }
    default: {
        uint32_t m = (uint32_t)(r >> 24);
        return m ? m : 1u;
    }
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 400;
    uint64_t seed = argc > 2 ? strtoull(argv[2], 0, 0) : 45;
    std::vector<Call> calls(n);
    std::vector<uint32_t> values(n * 32);
    for (int c = 0; c < n; c++) {
        uint64_t r = splitmix64(seed * 1000003 + c);
        Call k;
        k.op = (int)(r % OPS);
        k.mask = random_mask(splitmix64(r));
        k.width = k.op <= SHFL_XOR ? 1 << ((r >> 8) % 6) : 0;
        k.arg = k.op <= SHFL_XOR ? (int)((r >> 16) % 100) : 0;
        k.seed = splitmix64(r ^ 0x5eed);
        calls[c] = k;
        for (int l = 0; l < 32; l++) values[c * 32 + l] = (uint32_t)splitmix64(k.seed ^ (uint64_t)l);
    }
    Call *dc; uint32_t *dv, *dout;
    cudaMalloc(&dc, n * sizeof(Call));
    cudaMalloc(&dv, n * 32 * sizeof(uint32_t));
    cudaMalloc(&dout, n * 32 * sizeof(uint32_t));
    cudaMemcpy(dc, calls.data(), n * sizeof(Call), cudaMemcpyHostToDevice);
    cudaMemcpy(dv, values.data(), n * 32 * sizeof(uint32_t), cudaMemcpyHostToDevice);
    run<<<1, 32>>>(dc, dv, dout, n);
    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        fprintf(stderr, "warp_truth: %s\n", cudaGetErrorString(err));
        return 1;
    }
    std::vector<uint32_t> out(n * 32);
    cudaMemcpy(out.data(), dout, n * 32 * sizeof(uint32_t), cudaMemcpyDeviceToHost);
    printf("# warp_truth: %d calls, seed %llu, one warp of 32 lanes (benches/peers/warp_truth.cu)\n", n,
           (unsigned long long)seed);
    for (int c = 0; c < n; c++) {
        const Call &k = calls[c];
        printf("%s %d %d %x %llx:", NAMES[k.op], k.width, k.arg, k.mask, (unsigned long long)k.seed);
        for (int l = 0; l < 32; l++) {
            if (k.mask & (1u << l)) printf(" %x", out[c * 32 + l]);
            else printf(" -");
        }
        printf("\n");
    }
    return 0;
}
