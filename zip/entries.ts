// yauzl's event-style entry walk as a promise per entry, for the worker's unpacker and the
// daemon's preflight alike.
import type yauzl from 'yauzl';

/**
 * Reads the next entry; resolves null at the end. Errors the zip file emitted in between are
 * kept in `pending` and thrown here.
 */
export function nextEntry(zip: yauzl.ZipFile, pending: { error: Error | null }): Promise<yauzl.Entry | null> {
  if (pending.error) return Promise.reject(pending.error);
  return new Promise((resolve, reject) => {
    const done = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (e: yauzl.Entry) => (done(), resolve(e));
    const onEnd = () => (done(), resolve(null));
    const onError = (err: Error) => (done(), reject(err));
    zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
    zip.readEntry();
  });
}
