// Child process for bench:pack: the packer (packFolder) in a process of its own, so the RSS the
// bench samples is the packer's alone. Answers 'ready', then packs each folder it is sent and
// answers the time it took; exits when the bench disconnects.
export interface ChildRequest {
  dir: string;
  zipPath: string;
}
export interface ChildAnswer {
  seconds: number;
  bytes: number;
  fileCount: number;
}

async function child(): Promise<void> {
  const { packFolder } = await import('../../daemon/pack/pack-project.js');
  const archiver: string = 'archiver'; // a variable keeps tsc from looking for declarations archiver lacks
  await import(archiver); // loaded before the baseline, as in a daemon that has packed before
  process.on('message', (req: ChildRequest) => {
    const t0 = performance.now();
    packFolder(req.dir, { zipPath: req.zipPath, createdBy: 'bench' }).then(
      (out) =>
        process.send!({
          seconds: (performance.now() - t0) / 1000,
          bytes: out.bytes,
          fileCount: out.fileCount,
        } satisfies ChildAnswer),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
  process.once('disconnect', () => process.exit(0));
  process.send!('ready');
}

child().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
