// Zip entry names, decoded the same way by the worker's unpacker and the daemon's preflight.
// The top-level zip/ folder holds zip code shared by both (the daemon never imports service/).
import { isUtf8 } from 'node:buffer';
import yauzl from 'yauzl';

/** The fields of a yauzl entry the name depends on (read with `decodeStrings: false`). */
export type EntryNameFields = Pick<yauzl.Entry, 'generalPurposeBitFlag' | 'fileNameRaw' | 'extraFields'>;

/** General purpose flag bit 11: the name and comment are UTF-8. */
const UTF8_FLAG = 0x800;

/**
 * The entry's name, as Info-ZIP's unzip reads it: the Info-ZIP unicode path extra field (0x7075)
 * when present and matching; else UTF-8 when bit 11 is set or the bytes are valid UTF-8 (macOS's
 * own "Compress" writes UTF-8 names without the flag); else CP437, the zip format's default.
 * Backslashes are kept: the unpacker's rules treat them as separators themselves.
 */
export function decodeEntryName(entry: EntryNameFields): string {
  const raw = entry.fileNameRaw;
  const flag = isUtf8(raw) ? entry.generalPurposeBitFlag | UTF8_FLAG : entry.generalPurposeBitFlag;
  // yauzl checks the unicode path field first (its CRC must match the header's name bytes).
  return yauzl.getFileNameLowLevel(flag, raw, entry.extraFields, true);
}
