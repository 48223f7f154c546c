// A small WASI (preview1) for browsers, enough for programs built against wasi-libc:
// arguments, environment, clocks, random bytes, stdout/stderr to a line callback, and
// read-only files fetched from the page's origin (a synchronous request per open, so C's
// fopen works; `files` maps an absolute path prefix to a URL prefix). Everything else answers
// ENOSYS, as a system without it would.
const ESUCCESS = 0, EBADF = 8, EINVAL = 28, ENOENT = 44, ENOSYS = 52, EROFS = 69;
const FILETYPE_CHARACTER_DEVICE = 2, FILETYPE_DIRECTORY = 3, FILETYPE_REGULAR_FILE = 4;
const O_CREAT = 1, O_DIRECTORY = 2, O_TRUNC = 8;
const RIGHTS_FD_WRITE = 1n << 6n;

class Exit extends Error {
  constructor(code) { super(`exit ${code}`); this.code = code; }
}

export function browserWasi({ args = [], env = {}, onLine = console.log, files = null }) {
  let memory = null;
  const state = { exitCode: null };
  const dv = () => new DataView(memory.buffer);
  const u8 = () => new Uint8Array(memory.buffer);
  const encoder = new TextEncoder(), decoder = new TextDecoder();
  const pending = { 1: "", 2: "" };
  const fds = new Map(); // fd -> {bytes, pos} for open files; 3 is the preopened root
  let nextFd = 4;

  const putStrings = (list, ptrs, buf) => {
    for (const s of list) {
      const b = encoder.encode(s + "\0");
      dv().setUint32(ptrs, buf, true);
      u8().set(b, buf);
      ptrs += 4;
      buf += b.length;
    }
    return ESUCCESS;
  };
  const sizes = (list, countPtr, sizePtr) => {
    dv().setUint32(countPtr, list.length, true);
    dv().setUint32(sizePtr, list.reduce((n, s) => n + encoder.encode(s).length + 1, 0), true);
    return ESUCCESS;
  };
  const envList = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const fetchFile = (path) => {
    if (!files) return null;
    const prefix = Object.keys(files).find((p) => path.startsWith(p));
    if (prefix === undefined) return null;
    const xhr = new XMLHttpRequest();
    xhr.open("GET", files[prefix] + path.slice(prefix.length), false);
    xhr.overrideMimeType("text/plain; charset=x-user-defined"); // bytes, not decoded text
    try { xhr.send(); } catch { return null; }
    if (xhr.status !== 200) return null;
    const t = xhr.responseText, bytes = new Uint8Array(t.length);
    for (let i = 0; i < t.length; i++) bytes[i] = t.charCodeAt(i) & 0xff;
    return bytes;
  };

  const imports = {
    args_get: (a, b) => putStrings(args, a, b),
    args_sizes_get: (c, s) => sizes(args, c, s),
    environ_get: (a, b) => putStrings(envList, a, b),
    environ_sizes_get: (c, s) => sizes(envList, c, s),
    clock_time_get(id, precision, out) {
      const ns = id === 0 ? BigInt(Date.now()) * 1000000n : BigInt(Math.round(performance.now() * 1e6));
      dv().setBigUint64(out, ns, true);
      return ESUCCESS;
    },
    fd_write(fd, iovs, n, written) {
      let total = 0;
      for (let k = 0; k < n; k++) {
        const p = dv().getUint32(iovs + 8 * k, true), len = dv().getUint32(iovs + 8 * k + 4, true);
        if (fd === 1 || fd === 2) pending[fd] += decoder.decode(u8().slice(p, p + len));
        total += len;
      }
      if (fd !== 1 && fd !== 2) return EBADF;
      for (let nl; (nl = pending[fd].indexOf("\n")) >= 0; pending[fd] = pending[fd].slice(nl + 1)) onLine(pending[fd].slice(0, nl));
      dv().setUint32(written, total, true);
      return ESUCCESS;
    },
    fd_read(fd, iovs, n, read) {
      const f = fds.get(fd);
      if (!f) return fd === 0 ? (dv().setUint32(read, 0, true), ESUCCESS) : EBADF;
      let total = 0;
      for (let k = 0; k < n; k++) {
        const p = dv().getUint32(iovs + 8 * k, true), len = dv().getUint32(iovs + 8 * k + 4, true);
        const chunk = f.bytes.subarray(f.pos, f.pos + len);
        u8().set(chunk, p);
        f.pos += chunk.length;
        total += chunk.length;
      }
      dv().setUint32(read, total, true);
      return ESUCCESS;
    },
    fd_seek(fd, offset, whence, out) {
      const f = fds.get(fd);
      if (!f) return EBADF;
      const base = whence === 0 ? 0 : whence === 1 ? f.pos : f.bytes.length;
      const pos = base + Number(offset);
      if (pos < 0) return EINVAL;
      f.pos = pos;
      dv().setBigUint64(out, BigInt(pos), true);
      return ESUCCESS;
    },
    fd_close: (fd) => (fds.delete(fd) || fd < 4 ? ESUCCESS : EBADF),
    fd_fdstat_get(fd, out) {
      const type = fd <= 2 ? FILETYPE_CHARACTER_DEVICE : fd === 3 ? FILETYPE_DIRECTORY : fds.has(fd) ? FILETYPE_REGULAR_FILE : 0;
      if (!type) return EBADF;
      u8().fill(0, out, out + 24);
      dv().setUint8(out, type);
      dv().setBigUint64(out + 8, ~0n & 0xffffffffffffffffn, true); // all rights: the host decides
      dv().setBigUint64(out + 16, ~0n & 0xffffffffffffffffn, true);
      return ESUCCESS;
    },
    fd_fdstat_set_flags: () => ESUCCESS,
    // One preopened directory, "/", when files can be fetched: wasi-libc then resolves
    // absolute paths against it.
    fd_prestat_get(fd, out) {
      if (fd !== 3 || !files) return EBADF;
      dv().setUint8(out, 0);
      dv().setUint32(out + 4, 1, true);
      return ESUCCESS;
    },
    fd_prestat_dir_name(fd, p, len) {
      if (fd !== 3 || !files) return EBADF;
      u8()[p] = "/".charCodeAt(0);
      return ESUCCESS;
    },
    path_open(dirfd, dirflags, pathPtr, pathLen, oflags, rightsBase, rightsInherit, fdflags, out) {
      if (dirfd !== 3) return EBADF;
      if (oflags & (O_CREAT | O_TRUNC) || BigInt(rightsBase) & RIGHTS_FD_WRITE) return EROFS;
      if (oflags & O_DIRECTORY) return ENOSYS;
      const path = "/" + decoder.decode(u8().slice(pathPtr, pathPtr + pathLen));
      const bytes = fetchFile(path);
      if (!bytes) return ENOENT;
      const fd = nextFd++;
      fds.set(fd, { bytes, pos: 0 });
      dv().setUint32(out, fd, true);
      return ESUCCESS;
    },
    path_filestat_get: () => ENOENT,
    fd_readdir: () => ENOSYS,
    random_get(p, n) {
      for (let at = 0; at < n; at += 65536) crypto.getRandomValues(u8().subarray(p + at, p + Math.min(n, at + 65536)));
      return ESUCCESS;
    },
    // A sleep cannot block a page's thread: the subscriptions are answered at once, which
    // the callers (polling loops around WaitAny, which does yield) tolerate.
    poll_oneoff(inPtr, outPtr, n, countPtr) {
      for (let k = 0; k < n; k++) {
        const e = outPtr + 32 * k;
        u8().fill(0, e, e + 32);
        dv().setBigUint64(e, dv().getBigUint64(inPtr + 48 * k, true), true); // userdata
        dv().setUint8(e + 10, dv().getUint8(inPtr + 48 * k + 8)); // the subscription's type
      }
      dv().setUint32(countPtr, n, true);
      return ESUCCESS;
    },
    sched_yield: () => ESUCCESS,
    proc_exit(code) {
      for (const fd of [1, 2]) if (pending[fd]) onLine(pending[fd]);
      state.exitCode = code;
      throw new Exit(code);
    },
  };
  return {
    imports: { wasi_snapshot_preview1: new Proxy(imports, { get: (t, k) => t[k] ?? (() => ENOSYS) }) },
    state,
    bindMemory(instance) { memory = instance.exports.memory; },
  };
}
