//===- MpiStub.cpp - The MPI transport of a runtime built without MPI -----===//
//
// Built instead of MpiWorld.cpp, MpiEngine.cpp, MpiChannel.cpp and
// MpiTransport.cpp where CMake finds no MPI: meshes stay in one process,
// and asking for the world says how to get one.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/HAL/Device.h"
#include "blockpipe/Runtime/Mpi.h"

#include <cstdlib>

namespace blockpipe::runtime {

bool MpiWorld::available() { return false; }

MpiWorld::MpiWorld() = default;

MpiWorld &MpiWorld::get() {
  throw Error("this blockpipe runtime was built without MPI: install "
              "OpenMPI (libopenmpi-dev) and build again to run meshes over "
              "ranks");
}

namespace detail {
struct MpiEngine {};
} // namespace detail

MpiTransport::MpiTransport() { MpiWorld::get(); }
MpiTransport::~MpiTransport() = default;
int64_t MpiTransport::rank() const { return 0; }
int64_t MpiTransport::ranks() const { return 1; }
std::unique_ptr<Channel>
MpiTransport::open(const ChannelKey &key, Device *source, Device *target,
                   const ChannelOptions &options,
                   std::shared_ptr<TransferStats> stats) {
  return inProcess_.open(key, source, target, options, std::move(stats));
}
std::unique_ptr<Channel>
MpiTransport::openAcross(const ChannelKey &key, Device *local, bool isSource,
                         int64_t peer, const ChannelOptions &options,
                         std::shared_ptr<TransferStats> stats) {
  return Transport::openAcross(key, local, isSource, peer, options,
                               std::move(stats));
}
void MpiTransport::beginRun(std::function<void(const std::string &)>) {}
std::vector<std::string> MpiTransport::endRun(const std::string &,
                                              const std::function<bool()> &) {
  return {};
}
void MpiTransport::broadcast(void *data, int64_t bytes, int64_t root) {
  Transport::broadcast(data, bytes, root);
}
int64_t MpiTransport::mostSendsAhead() const { return 0; }
void MpiWorld::abort(int) { std::abort(); }
bool MpiWorld::initialized() { return false; }

} // namespace blockpipe::runtime
