// d2d: a channel transfer between two cpu-sim devices of a mesh, against
// memcpy of the same bytes between the same buffers, and against a host
// round trip (device 0 -> a host buffer -> device 1, the path a socket or
// host-staged transfer takes). Value: GB/s (higher is better).
#include "BenchUtil.h"

#include "blockpipe/Runtime/Mesh.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace rt = blockpipe::runtime;

int main(int argc, char **argv) {
  const bench::Options options = bench::parseOptions(argc, argv);
  rt::Mesh mesh = rt::Mesh::open("cpu-sim", {2});
  rt::Device &from = mesh.device(0), &to = mesh.device(1);
  rt::Channel &channel = mesh.channel(0, 1, 0);

  for (int64_t kib : {64, 256, 1024, 4096, 16384, 65536}) {
    const int64_t bytes = kib * 1024;
    const int64_t floats = bytes / 4;
    void *src = from.allocate(bytes, "src");
    void *dst = to.allocate(bytes, "dst");
    // A page-aligned staging buffer, as a driver's pinned host memory is.
    std::unique_ptr<unsigned char, decltype(&std::free)> host(
        static_cast<unsigned char *>(std::aligned_alloc(4096, size_t(bytes))),
        &std::free);
    std::memset(host.get(), 0, size_t(bytes));
    from.fill(src, 7, bytes);
    to.fill(dst, 0, bytes);
    rt::TransferBuffer sent{&from, src, {floats}, rt::DType::FP32, "send"};
    rt::TransferBuffer received{&to, dst, {floats}, rt::DType::FP32, "recv"};

    // Enough copies per measurement to take a few milliseconds.
    const int iters = int(
        std::max<int64_t>(2, (options.quick ? 64 : 256) * 1024 * 1024 / bytes));
    const int reps = options.quick ? 5 : 11;
    auto rate = [&](auto &&copy) {
      return double(bytes) * iters / 1e9 / bench::seconds([&] {
               for (int i = 0; i < iters; ++i)
                 copy();
             });
    };
    auto viaChannel = [&] {
      rt::CompletionPtr done = channel.send(sent);
      channel.recv(received)->wait();
      done->wait();
    };
    auto viaMemcpy = [&] { std::memcpy(dst, src, size_t(bytes)); };
    auto viaHost = [&] {
      from.copyToHost(host.get(), src, bytes);
      to.copyToDevice(dst, host.get(), bytes);
    };
    viaChannel(), viaMemcpy(), viaHost(); // warm up
    auto [channelRate, memcpyRate] = bench::alternate(
        reps, [&] { return rate(viaChannel); },
        [&] { return rate(viaMemcpy); });
    auto [channelRate2, hostRate] = bench::alternate(
        reps, [&] { return rate(viaChannel); }, [&] { return rate(viaHost); });
    const std::string size = std::to_string(kib >= 1024 ? kib / 1024 : kib) +
                             (kib >= 1024 ? " MiB" : " KiB");
    const std::string extra = "\"bytes\": " + std::to_string(bytes);
    bench::emit("d2d", size + " vs memcpy", channelRate, "GB/s", "memcpy",
                memcpyRate, extra);
    bench::emit("d2d", size + " vs host round trip", channelRate2, "GB/s",
                "host round trip", hostRate, extra);
    from.free(src);
    to.free(dst);
  }
  const rt::TransferCounters counters = mesh.counters();
  if (counters.hostStagedBytes != 0) {
    std::fprintf(stderr, "d2d: %lld bytes went through the host\n",
                 static_cast<long long>(counters.hostStagedBytes));
    return 1;
  }
  return 0;
}
