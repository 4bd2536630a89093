#include <cooperative_groups.h>  // (library_cg.cu) warp_sum as cooperative groups' reduce over a 32-thread tile
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
// REGION
    return cg::reduce(cg::tiled_partition<32>(cg::this_thread_block()), v, cg::plus<float>());
