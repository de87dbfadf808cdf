//===- Npy.cpp - numpy's .npy and .npz files ------------------------------===//

#include "blockpipe/Runtime/Npy.h"
#include "blockpipe/Runtime/Error.h"

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace blockpipe::runtime {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !out.write(bytes.data(), std::streamsize(bytes.size())) ||
      !out.flush())
    throw Error(path + ": cannot write: " + std::strerror(errno));
}

/// The value of `key` in a .npy header's dict literal, as written there.
std::string headerValue(const std::string &header, const std::string &key,
                        const std::string &origin) {
  const std::string quoted = "'" + key + "'";
  size_t at = header.find(quoted);
  if (at == std::string::npos)
    throw Error(origin + ": .npy header has no " + quoted);
  at = header.find(':', at + quoted.size());
  if (at == std::string::npos)
    throw Error(origin + ": .npy header: no value for " + quoted);
  ++at;
  while (at < header.size() && header[at] == ' ')
    ++at;
  size_t end = at;
  if (header[at] == '(') {
    end = header.find(')', at);
    if (end == std::string::npos)
      throw Error(origin + ": .npy header: unterminated shape");
    return header.substr(at, end + 1 - at);
  }
  if (header[at] == '\'') {
    end = header.find('\'', at + 1);
    if (end == std::string::npos)
      throw Error(origin + ": .npy header: unterminated string");
    return header.substr(at + 1, end - at - 1);
  }
  end = header.find_first_of(",}", at);
  return header.substr(at, end - at);
}

uint16_t le16(const unsigned char *p) { return uint16_t(p[0] | p[1] << 8); }
uint32_t le32(const unsigned char *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}
uint64_t le64(const unsigned char *p) {
  return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32;
}
void put16(std::string &out, uint32_t v) {
  out += char(v & 0xff);
  out += char(v >> 8 & 0xff);
}
void put32(std::string &out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

} // namespace

int64_t NpyArray::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

bool NpyArray::holds(target::DType dtype) const {
  if (dtype == DType::BF16)
    return descr.size() == 3 && descr[2] == '2' &&
           (descr[1] == 'V' || descr[1] == 'u' || descr[1] == 'i');
  return descr == npyDescr(dtype);
}

std::string npyDescr(target::DType dtype) {
  const target::DTypeInfo &info = target::dtypeInfo(dtype);
  if (dtype == DType::BF16)
    return "<u2";
  const char kind = info.isFloat                     ? 'f'
                    : target::dtypeIsUnsigned(dtype) ? 'u'
                                                     : 'i';
  return std::string(info.bytes == 1 ? "|" : "<") + kind +
         std::to_string(info.bytes);
}

NpyArray parseNpy(const std::string &bytes, const std::string &origin) {
  const auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    throw Error(origin + ": not a .npy file (no \\x93NUMPY magic)");
  const int major = p[6];
  size_t headerLen, start;
  if (major == 1) {
    headerLen = le16(p + 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      throw Error(origin + ": truncated .npy header");
    headerLen = le32(p + 8);
    start = 12;
  } else {
    throw Error(origin + ": .npy format version " + std::to_string(major) +
                " is not supported");
  }
  if (start + headerLen > bytes.size())
    throw Error(origin + ": truncated .npy header");
  const std::string header = bytes.substr(start, headerLen);
  NpyArray array;
  array.descr = headerValue(header, "descr", origin);
  if (headerValue(header, "fortran_order", origin) != "False")
    throw Error(origin + ": the array is in Fortran order; save a C-ordered "
                         "one (np.ascontiguousarray)");
  if (array.descr.size() < 3 || array.descr[0] == '>' || array.descr[1] == 'O')
    throw Error(origin + ": dtype '" + array.descr +
                "' is not supported (little-endian numbers only)");
  const std::string shape = headerValue(header, "shape", origin);
  std::string dim;
  for (char c : shape.substr(1)) {
    if (c >= '0' && c <= '9') {
      dim += c;
    } else if ((c == ',' || c == ')') && !dim.empty()) {
      array.shape.push_back(std::stoll(dim));
      dim.clear();
    }
  }
  const int64_t itemBytes = std::stoll(array.descr.substr(2));
  const size_t dataBytes = size_t(array.elements() * itemBytes);
  const size_t dataStart = start + headerLen;
  if (bytes.size() - dataStart != dataBytes)
    throw Error(origin + ": holds " + std::to_string(bytes.size() - dataStart) +
                " bytes of data; its header says " + std::to_string(dataBytes));
  array.data.assign(p + dataStart, p + bytes.size());
  return array;
}

std::string serializeNpy(const NpyArray &array) {
  std::string header =
      "{'descr': '" + array.descr + "', 'fortran_order': False, 'shape': (";
  for (int64_t d : array.shape)
    header += std::to_string(d) + (array.shape.size() == 1 ? "," : ", ");
  if (array.shape.size() > 1)
    header.resize(header.size() - 2);
  header += "), }";
  // Version 1.0; the data starts at a multiple of 64 bytes.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += char(1);
  out += char(0);
  put16(out, uint32_t(header.size()));
  out += header;
  out.append(reinterpret_cast<const char *>(array.data.data()),
             array.data.size());
  return out;
}

NpyArray readNpy(const std::string &path) {
  return parseNpy(readFile(path), path);
}

void writeNpy(const std::string &path, const NpyArray &array) {
  writeFile(path, serializeNpy(array));
}

std::map<std::string, NpyArray> readNpz(const std::string &path) {
  const std::string zip = readFile(path);
  const auto *p = reinterpret_cast<const unsigned char *>(zip.data());
  const size_t size = zip.size();
  // The end of central directory record: the last signature 0x06054b50.
  size_t eocd = std::string::npos;
  for (size_t at = size >= 22 ? size - 22 : 0; size >= 22; --at) {
    if (le32(p + at) == 0x06054b50) {
      eocd = at;
      break;
    }
    if (at == 0 || size - at > 22 + 65535)
      break;
  }
  if (eocd == std::string::npos)
    throw Error(path + ": not an .npz (zip) file");
  uint64_t entries = le16(p + eocd + 10);
  uint64_t directory = le32(p + eocd + 16);
  // zip64: the locator just before points to the zip64 end record.
  if (eocd >= 20 && le32(p + eocd - 20) == 0x07064b50) {
    const uint64_t record = le64(p + eocd - 20 + 8);
    if (record + 56 > size || le32(p + record) != 0x06064b50)
      throw Error(path + ": corrupt zip64 end record");
    entries = le64(p + record + 32);
    directory = le64(p + record + 48);
  }
  std::map<std::string, NpyArray> arrays;
  size_t at = directory;
  for (uint64_t i = 0; i < entries; ++i) {
    if (at + 46 > size || le32(p + at) != 0x02014b50)
      throw Error(path + ": corrupt zip central directory");
    const uint16_t method = le16(p + at + 10);
    uint64_t compressed = le32(p + at + 20);
    uint64_t uncompressed = le32(p + at + 24);
    const uint16_t nameLen = le16(p + at + 28);
    const uint16_t extraLen = le16(p + at + 30);
    const uint16_t commentLen = le16(p + at + 32);
    uint64_t local = le32(p + at + 42);
    const std::string name(zip.data() + at + 46, nameLen);
    // zip64 sizes and offset, in this order, for the fields set to ~0.
    for (size_t e = at + 46 + nameLen; e + 4 <= at + 46 + nameLen + extraLen;) {
      const uint16_t id = le16(p + e), len = le16(p + e + 2);
      if (id == 0x0001) {
        size_t f = e + 4;
        if (uncompressed == 0xffffffffu)
          uncompressed = le64(p + f), f += 8;
        if (compressed == 0xffffffffu)
          compressed = le64(p + f), f += 8;
        if (local == 0xffffffffu)
          local = le64(p + f);
      }
      e += 4 + len;
    }
    at += 46 + nameLen + extraLen + commentLen;
    if (local + 30 > size || le32(p + local) != 0x04034b50)
      throw Error(path + ": corrupt zip member '" + name + "'");
    const size_t data =
        local + 30 + le16(p + local + 26) + le16(p + local + 28);
    if (data + compressed > size)
      throw Error(path + ": truncated zip member '" + name + "'");
    std::string bytes;
    if (method == 0) {
      bytes.assign(zip.data() + data, compressed);
    } else if (method == 8) {
      bytes.resize(uncompressed);
      z_stream stream{};
      stream.next_in = const_cast<Bytef *>(p + data);
      stream.avail_in = uInt(compressed);
      stream.next_out = reinterpret_cast<Bytef *>(bytes.data());
      stream.avail_out = uInt(uncompressed);
      const bool ok = inflateInit2(&stream, -MAX_WBITS) == Z_OK &&
                      inflate(&stream, Z_FINISH) == Z_STREAM_END &&
                      stream.total_out == uncompressed;
      inflateEnd(&stream);
      if (!ok)
        throw Error(path + ": cannot inflate member '" + name + "'");
    } else {
      throw Error(path + ": member '" + name + "' uses zip method " +
                  std::to_string(method) + " (stored or deflated only)");
    }
    std::string key = name;
    if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0)
      key.resize(key.size() - 4);
    arrays[key] = parseNpy(bytes, path + ":" + name);
  }
  return arrays;
}

void writeNpz(const std::string &path,
              const std::map<std::string, NpyArray> &arrays) {
  std::string zip, directory;
  for (const auto &[key, array] : arrays) {
    const std::string name = key + ".npy";
    const std::string bytes = serializeNpy(array);
    if (bytes.size() >= 0xffffffffu || zip.size() >= 0xffffffffu)
      throw Error(path + ": '" + key +
                  "' does not fit an .npz without zip64; write a directory "
                  "of .npy files instead");
    const uint32_t crc = uint32_t(crc32(
        0, reinterpret_cast<const Bytef *>(bytes.data()), uInt(bytes.size())));
    const uint32_t offset = uint32_t(zip.size());
    auto header = [&](std::string &out, bool central) {
      put32(out, central ? 0x02014b50 : 0x04034b50);
      if (central)
        put16(out, 20); // made by
      put16(out, 20);   // version needed
      put16(out, 0);    // flags
      put16(out, 0);    // stored
      put16(out, 0);    // time
      put16(out, 0x21); // date: 1980-01-01
      put32(out, crc);
      put32(out, uint32_t(bytes.size()));
      put32(out, uint32_t(bytes.size()));
      put16(out, uint32_t(name.size()));
      put16(out, 0); // extra
      if (central) {
        put16(out, 0); // comment
        put16(out, 0); // disk
        put16(out, 0); // internal attributes
        put32(out, 0); // external attributes
        put32(out, offset);
      }
      out += name;
    };
    header(zip, false);
    zip += bytes;
    header(directory, true);
  }
  const uint32_t directoryOffset = uint32_t(zip.size());
  zip += directory;
  put32(zip, 0x06054b50);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, uint32_t(arrays.size()));
  put16(zip, uint32_t(arrays.size()));
  put32(zip, uint32_t(directory.size()));
  put32(zip, directoryOffset);
  put16(zip, 0);
  writeFile(path, zip);
}

} // namespace blockpipe::runtime
