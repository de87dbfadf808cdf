//===- Mesh.h - Devices opened together, their channels, mesh runs -*- C++
//-*-===//
//
// A mesh is N devices of one spec opened together through the HAL (ids in
// row-major order of its shape), the channels between them and the
// counters of what moved. A Mesh object is a handle: copies share the same
// devices. A submesh is a rectangle of a mesh carved by offset and shape;
// submeshes are cached, and every handle keeps the devices open, so no
// handle goes stale while it lives.
//
// Channels are made by the mesh's transport on the first transfer between
// (source, target, channel) and reused after. A mesh program runs its
// orchestration once per device, each on a task graph of its own; a device
// whose graph fails or finishes ends the transfers still waiting for it.
// close() (or the last handle going) waits for running programs, then
// releases the channels, then the devices.
//
// With a transport over several ranks (MpiTransport, under mpirun) every
// rank opens the same mesh and holds a contiguous share of its devices;
// each rank runs its devices' part of a program, and a run ends on every
// rank with the outcome of all of them.
//
// Thread-safe: handles may be used from several host threads at once; the
// runs of programs on one mesh take turns.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_MESH_H
#define BLOCKPIPE_RUNTIME_MESH_H

#include "blockpipe/HAL/Device.h"
#include "blockpipe/Runtime/Channel.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace blockpipe::runtime {

class TaskGraph;

struct MeshOptions {
  /// Options of every device; each gets its index as deviceId, and the
  /// label "<label> device <index>" when a label is given.
  DeviceOptions device;
  ChannelOptions channel;
  /// Makes the channels; default: in-process. A transport over several
  /// ranks (MpiTransport) opens only this rank's devices.
  std::shared_ptr<Transport> transport;
};

/// How a mesh program is waited for.
struct MeshRunOptions {
  /// Asked every `poll` while the program runs: true cancels it (a Ctrl-C).
  std::function<bool()> interrupted;
  std::chrono::milliseconds poll{20};
};

class Mesh {
public:
  /// Opens the devices of `shape` (one dim for a line of devices), all of
  /// `spec`, through the HAL.
  static Mesh open(DeviceSpec spec, std::vector<int64_t> shape,
                   MeshOptions options = {});
  /// The same with a bundled spec ("cpu-sim").
  static Mesh open(const std::string &target, std::vector<int64_t> shape,
                   MeshOptions options = {});

  int64_t size() const;
  const std::vector<int64_t> &shape() const;
  /// Device `index` of this mesh; Error naming the index and the mesh size.
  Device &device(int64_t index) const;
  /// The index that device `index` of this mesh has in the whole mesh.
  int64_t globalIndex(int64_t index) const;
  /// Whether device `index` is in this process (always, but for a mesh
  /// whose transport spreads it over ranks), and the rank that hosts it.
  bool isLocal(int64_t index) const;
  int64_t rankOf(int64_t index) const;

  /// Collective over the ranks (in the same order on each): host buffer
  /// `data` holds `bytesPerDevice` for each device of this mesh, in order,
  /// and each rank has filled its own devices' parts; afterwards every rank
  /// holds all of them. Nothing to do with one rank.
  void shareByDevice(void *data, int64_t bytesPerDevice) const;
  /// Collective over the ranks: the rank hosting device `index` copies
  /// `bytes` at `data` to `data` on every other rank.
  void shareFromDevice(int64_t index, void *data, int64_t bytes) const;

  /// The devices `offset` .. `offset + shape` of this mesh (per dim; rank as
  /// this mesh's). The same request gives a handle to the same submesh.
  Mesh submesh(std::vector<int64_t> offset, std::vector<int64_t> shape) const;

  /// The channel from device `source` to `target` (this mesh's ids), made on
  /// first use and cached. Error for an id outside the mesh or a device
  /// sending to itself.
  Channel &channel(int64_t source, int64_t target, int64_t channel) const;
  /// The options every channel of the mesh gets.
  const ChannelOptions &channelOptions() const;
  /// Transfers so far on every channel of the whole mesh.
  TransferCounters counters() const;
  /// Channels created so far.
  int64_t channelCount() const;

  /// Runs a mesh program: `submit(graph)` once per device on a graph of its
  /// own (graph.meshIndex() says which device; it submits the
  /// orchestration), then waits for every graph. A device whose graph
  /// fails, or finishes while transfers still wait for it, fails them with
  /// an error naming it. Throws Error naming every failed device.
  void run(const std::function<void(TaskGraph &)> &submit,
           const MeshRunOptions &options = {}) const;
  /// Cancels the running program, if any: its graphs and its transfers.
  void cancel(const std::string &why) const;

  /// Waits for running programs, releases the channels, then the devices.
  /// Any later use of a handle of this mesh is an Error.
  void close() const;
  bool closed() const;

  struct State;
  struct View;

private:
  Mesh(std::shared_ptr<State> state, std::shared_ptr<const View> view)
      : state_(std::move(state)), view_(std::move(view)) {}

  std::shared_ptr<State> state_;
  std::shared_ptr<const View> view_;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_MESH_H
