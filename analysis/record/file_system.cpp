#include "analysis/record/file_system.hpp"

#include <sys/vfs.h>

#include <array>
#include <system_error>

namespace commsgd::record {
namespace {

struct KnownFileSystem {
  long magic;
  const char* name;
  bool network;
};

// The f_type values of linux/magic.h and of the cluster file systems that define their own.
constexpr std::array kKnown{
    KnownFileSystem{0xEF53, "ext4", false},  // ext2, ext3 and ext4 share it
    KnownFileSystem{0x58465342, "xfs", false},
    KnownFileSystem{0x9123683E, "btrfs", false},
    KnownFileSystem{0x01021994, "tmpfs", false},
    KnownFileSystem{0x794C7630, "overlay", false},  // containers
    KnownFileSystem{0x2FC12FC1, "zfs", false},
    KnownFileSystem{0x6969, "nfs", true},  // NFS v2, v3 and v4
    KnownFileSystem{0x0BD00BD0, "lustre", true},
    KnownFileSystem{0x47504653, "gpfs", true},  // IBM Storage Scale
    KnownFileSystem{0x19830326, "beegfs", true},
    KnownFileSystem{0x00C36400, "ceph", true},
    KnownFileSystem{0xFF534D42, "cifs", true},
    KnownFileSystem{0xFE534D42, "smb2", true},
    KnownFileSystem{0x20030528, "pvfs2", true},  // OrangeFS
    KnownFileSystem{0x01021997, "9p", true},
    KnownFileSystem{0x5346414F, "afs", true},
    KnownFileSystem{0x65735546, "fuse", true},  // sshfs, GlusterFS, cloud buckets
};

}  // namespace

FileSystem file_system_of_type(long f_type) {
  // f_type is a signed word: a magic with its top bit set may come back negative.
  const long magic = f_type & 0xFFFFFFFFL;
  for (const KnownFileSystem& known : kKnown) {
    if (known.magic == magic) return {known.name, known.network};
  }
  return {"unknown", false};
}

FileSystem file_system_of(const std::filesystem::path& path) {
  std::filesystem::path existing = std::filesystem::absolute(path);
  std::error_code ec;
  while (!std::filesystem::exists(existing, ec) && existing.has_relative_path()) {
    existing = existing.parent_path();
  }
  struct statfs info {};
  if (statfs(existing.c_str(), &info) != 0) return {"unknown", false};
  return file_system_of_type(static_cast<long>(info.f_type));
}

JournalMode journal_mode_for(const FileSystem& where) {
  return where.network ? JournalMode::rollback : JournalMode::wal;
}

}  // namespace commsgd::record
