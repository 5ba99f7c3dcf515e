// Reads the symbol versions an ELF shared object needs from each library (its GNU version-needs
// section, what `readelf -V` prints under ".gnu.version_r"), so the glibc floor of a built `.node`
// can be checked without binutils. Little-endian ELF32 and ELF64: every Linux target we ship.

const SHT_GNU_VERNEED = 0x6ffffffe;

/**
 * @param {Buffer} elf the file's bytes
 * @returns {Map<string, string[]>} library file name → version names needed from it
 */
export function elfVersionNeeds(elf) {
  if (elf.length < 64 || elf.readUInt32BE(0) !== 0x7f454c46) throw new Error('not an ELF file');
  const is64 = elf[4] === 2;
  if (elf[5] !== 1) throw new Error('big-endian ELF is not supported');
  const word = (at) => elf.readUInt32LE(at);
  const addr = (at) => (is64 ? Number(elf.readBigUInt64LE(at)) : word(at));
  const shoff = addr(is64 ? 0x28 : 0x20);
  const shentsize = elf.readUInt16LE(is64 ? 0x3a : 0x2e);
  const shnum = elf.readUInt16LE(is64 ? 0x3c : 0x30);
  const section = (index) => {
    const at = shoff + index * shentsize;
    return {
      type: word(at + 4),
      offset: addr(at + (is64 ? 0x18 : 0x10)),
      link: word(at + (is64 ? 0x28 : 0x18)),
      info: word(at + (is64 ? 0x2c : 0x1c)),
    };
  };
  const cString = (at) => elf.toString('latin1', at, elf.indexOf(0, at));

  const needs = new Map();
  for (let index = 0; index < shnum; index += 1) {
    const verneed = section(index);
    if (verneed.type !== SHT_GNU_VERNEED) continue;
    const strings = section(verneed.link).offset;
    // Verneed: vn_version u16, vn_cnt u16, vn_file u32, vn_aux u32, vn_next u32 (same in ELF32).
    let entry = verneed.offset;
    for (let n = 0; n < verneed.info; n += 1) {
      const count = elf.readUInt16LE(entry + 2);
      const versions = [];
      // Vernaux: vna_hash u32, vna_flags u16, vna_other u16, vna_name u32, vna_next u32.
      let aux = entry + word(entry + 8);
      for (let a = 0; a < count; a += 1) {
        versions.push(cString(strings + word(aux + 8)));
        aux += word(aux + 12);
      }
      needs.set(cString(strings + word(entry + 4)), versions);
      entry += word(entry + 12);
    }
  }
  return needs;
}

/** The newest `GLIBC_x.y[.z]` version the file needs, as a number array ([] when none). */
export function newestGlibcNeeded(elf) {
  const versions = [...elfVersionNeeds(elf).values()]
    .flat()
    .filter((name) => name.startsWith('GLIBC_') && /^GLIBC_[\d.]+$/.test(name))
    .map((name) => name.slice('GLIBC_'.length).split('.').map(Number));
  return versions.reduce((newest, v) => (compareVersions(v, newest) > 0 ? v : newest), []);
}

/** Compares dotted versions given as number arrays: negative, zero or positive. */
export function compareVersions(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
