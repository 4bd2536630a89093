// Checks for the OpenCL companion of lesson 02. It #includes the program's own main.cpp, so the
// kernels and launch shapes tested are the ones the program runs.
//
//   check --host     the host-side cases (CPU reference, launch shapes, the limits check)
//   check --opencl   the cases that run kernels, on the device the program would choose (on a
//                    machine without a GPU: PoCL, the CPU). With no OpenCL platform at all they
//                    print why and exit 77, which CTest counts as SKIPPED, never as passed;
//                    COURSE_REQUIRE_OPENCL=1 turns that skip into a failure.
//   check            both (the OpenCL cases left out, with a notice, if there is no platform)
#define COURSE_NO_MAIN
#include "main.cpp"

#define DOCTEST_CONFIG_IMPLEMENT
#include "check_main.hpp"

#include <utility>

#define OPENCL_TEST_CASE(name) TEST_CASE(name* doctest::test_suite("opencl"))

namespace {

// Single elements, one row, one column, primes, non-multiples of every tile (16, 32 and the
// dynamic tiles below), tall and wide.
const std::pair<int, int> kShapes[] = {{1, 1},   {1, 37},  {37, 1},   {37, 45},  {33, 65},
                                       {64, 64}, {100, 36}, {257, 131}, {31, 1031}, {1031, 31}};

/// Runs `v` once on a rows x cols input with the output poisoned; compares with the CPU.
course::VerifyResult run_variant(const OpenCl& cl, const Variant& v, int rows, int cols) {
    const std::vector<float> host_in = course::random_floats(static_cast<std::size_t>(rows) * cols, rows * 31u + cols);
    const std::size_t bytes = host_in.size() * sizeof(float);
    const cl::Buffer in(cl.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, const_cast<float*>(host_in.data()));
    const cl::Buffer out(cl.context, CL_MEM_READ_WRITE, bytes);
    const cl::Kernel kernel = make_kernel(cl, v, in, out, rows, cols);
    return launch_and_check(cl, kernel, v, out, transpose_cpu(host_in, rows, cols), rows, cols);
}

/// The device the program chooses by default, opened once for all test cases.
const OpenCl& default_device() {
    static const OpenCl cl = open_device(choose_device(-1, -1));
    return cl;
}

/// Runs the program's whole main() in this process with these arguments; returns its exit code.
int run_program(std::vector<std::string> args) {
    args.insert(args.begin(), "02_shared_transpose_opencl");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return run_lesson(static_cast<int>(argv.size()), argv.data());
}

const WorkGroupLimits kSmallDevice{256, 256, 256, 16384, 0};  // invented limits, for the host-side cases

}  // namespace

// ---------------------------------------------------------------- host side

TEST_CASE("transpose_cpu puts in[r][c] at out[c][r], and twice is the identity") {
    const int rows = 5, cols = 7;
    const std::vector<float> in = course::random_floats(rows * cols, 1);
    const std::vector<float> out = transpose_cpu(in, rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) CHECK(out[c * rows + r] == in[r * cols + c]);
    CHECK(transpose_cpu(out, cols, rows) == in);
}

TEST_CASE("every kernel the program names is defined in the embedded transpose.cl") {
    std::vector<Variant> all = lesson_variants(32);
    all.push_back(racy_variant());
    const std::string source = kTransposeClSource;
    for (const Variant& v : all) {
        CAPTURE(v.kernel);
        CHECK(source.find("kernel void " + v.kernel + "(") != std::string::npos);
    }
    CHECK(source.find("barrier(") != std::string::npos);
}

TEST_CASE("launch shapes: whole work-groups that cover every element, the tile kernels one group per tile") {
    for (const Variant& v : lesson_variants(24)) {
        CAPTURE(v.kernel);
        for (const auto& [rows, cols] : kShapes) {
            const cl::NDRange g = global_size(v, rows, cols);
            CHECK(g[0] % v.local_x == 0);  // OpenCL 1.2 wants whole work-groups
            CHECK(g[1] % v.local_y == 0);
            const std::size_t groups = (g[0] / v.local_x) * (g[1] / v.local_y);
            if (v.cover == Cover::Tiles) {
                CHECK(groups == ((cols + v.tile - 1) / v.tile) * ((rows + v.tile - 1) / v.tile));
            } else {  // one work-item per element, none short
                CHECK(g[0] * g[1] >= static_cast<std::size_t>(rows) * cols);
                CHECK(g[0] >= static_cast<std::size_t>(v.cover == Cover::ElementsRowsOnDim0 ? rows : cols));
            }
        }
    }
}

TEST_CASE("the dynamic tile: its local argument is tile x (tile + 1) floats, its work-group at most 256 items") {
    for (std::size_t tile : {1, 2, 8, 24, 32, 64, 100, 128, 256, 1024}) {
        CAPTURE(tile);
        const Variant v = dynamic_variant(tile);
        CHECK(v.local_bytes == tile * (tile + 1) * sizeof(float));
        CHECK(v.local_x == tile);
        CHECK(v.local_y >= 1);
        CHECK(v.local_y <= tile);
        CHECK((v.local_x * v.local_y <= 256 || v.local_y == 1));
    }
}

TEST_CASE("why_it_does_not_fit names the limit and both numbers, and is empty when it fits") {
    CHECK(why_it_does_not_fit(dynamic_variant(32), kSmallDevice).empty());  // 4224 bytes, 32 x 8 items
    const std::string too_big = why_it_does_not_fit(dynamic_variant(64), kSmallDevice);  // 16640 bytes
    CHECK(too_big.find("16640 bytes") != std::string::npos);
    CHECK(too_big.find("16384") != std::string::npos);
    CHECK(too_big.find("CL_DEVICE_LOCAL_MEM_SIZE") != std::string::npos);

    WorkGroupLimits own_arrays = kSmallDevice;
    own_arrays.kernel_local_mem = 16384 - 4224 + 1;  // the kernel's own local arrays count too
    const std::string own = why_it_does_not_fit(dynamic_variant(32), own_arrays);
    CHECK(own.find("16385 bytes") != std::string::npos);
    CHECK(own.find("4224 for the tile") != std::string::npos);

    WorkGroupLimits narrow = kSmallDevice;
    narrow.max_x = 16;
    CHECK(why_it_does_not_fit(lesson_variants(32)[3], narrow).find("CL_DEVICE_MAX_WORK_ITEM_SIZES") != std::string::npos);
    WorkGroupLimits few_items = kSmallDevice;
    few_items.max_items = 128;
    CHECK(why_it_does_not_fit(lesson_variants(32)[3], few_items).find("CL_KERNEL_WORK_GROUP_SIZE") != std::string::npos);
}

TEST_CASE("bad command lines exit with code 2 before any device is opened") {
    CHECK(run_program({"--rows", "0"}) == kExitUsage);
    CHECK(run_program({"--tile", "0"}) == kExitUsage);
    CHECK(run_program({"--rows", "65536", "--cols", "65536"}) == kExitUsage);
    CHECK(run_program({"--kernel", "transpose_nonexistent"}) == kExitUsage);
    CHECK(run_program({"--colour", "red"}) == kExitUsage);
    CHECK(cl_error_name(CL_INVALID_WORK_GROUP_SIZE) == std::string("CL_INVALID_WORK_GROUP_SIZE"));
}

// ---------------------------------------------------------------- on an OpenCL device

OPENCL_TEST_CASE("every kernel matches the CPU reference on awkward shapes, output poisoned first") {
    const OpenCl& cl = default_device();
    std::vector<Variant> variants = lesson_variants(32);
    for (std::size_t tile : {1, 8, 24, 64}) variants.push_back(dynamic_variant(tile));  // 24: not a power of two
    for (const Variant& v : variants) {
        for (const auto& [rows, cols] : kShapes) {
            CAPTURE(v.label);
            CAPTURE(rows);
            CAPTURE(cols);
            const course::VerifyResult r = run_variant(cl, v, rows, cols);
            INFO(r.summary());
            CHECK(r.ok());
        }
    }
}

OPENCL_TEST_CASE("a tile larger than the device's local memory is refused before launching, with exit code 4") {
    const OpenCl& cl = default_device();
    const std::size_t local_mem = cl.device.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
    std::size_t tile = 1;
    while (tile * (tile + 1) * sizeof(float) <= local_mem) ++tile;  // the smallest tile that does not fit
    CAPTURE(tile);
    CAPTURE(local_mem);
    CHECK_THROWS_AS(run_variant(cl, dynamic_variant(tile), 37, 45), DoesNotFitError);
    if (tile <= 1024)  // --tile's range
        CHECK(run_program({"--tile", std::to_string(tile), "--rows", "37", "--cols", "45"}) == kExitDoesNotFit);
    CHECK(run_variant(cl, dynamic_variant(tile - 1 > 32 ? 32 : tile - 1), 37, 45).ok());  // a smaller one still runs
}

OPENCL_TEST_CASE("a kernel source the compiler rejects: the message carries the compiler's log") {
    const OpenCl& cl = default_device();
    const std::string broken = "kernel void broken(global float* out) { out[0] = undeclared_name; }\n";
    try {
        build_program(cl.context, cl.device, broken);
        FAIL("the broken source compiled");
    } catch (const std::runtime_error& e) {
        const std::string message = e.what();
        CHECK(message.find("CL_BUILD_PROGRAM_FAILURE") != std::string::npos);
        CHECK(message.find("undeclared_name") != std::string::npos);  // the log names the culprit
    }
}

OPENCL_TEST_CASE("the whole program runs every kernel on a small awkward shape and exits 0") {
    CHECK(run_program({"--rows", "37", "--cols", "45", "--tile", "16", "--warmup", "1", "--repeats", "3"}) == kExitOk);
    CHECK(run_program({"--rows", "45", "--cols", "37", "--kernel", "transpose_tiled_dynamic", "--tile", "24"}) == kExitOk);
    CHECK(run_program({"--list-devices"}) == kExitOk);
    CHECK(run_program({"--platform", "255"}) == kExitUsage);
}

// ---------------------------------------------------------------- main: honest skipping

int main(int argc, char** argv) {
    return course::run_checks(argc, argv, {"--opencl", "opencl", "OpenCL", "COURSE_REQUIRE_OPENCL"}, [] {
        try {
            const cl::Device d = choose_device(-1, -1);
            std::printf("OpenCL checks run on: %s\n", short_description(d).c_str());
            return std::string();
        } catch (const NoDeviceError& e) {
            return std::string(e.what());
        }
    });
}
