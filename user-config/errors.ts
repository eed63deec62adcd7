// The one error of the config: it names the setting and where its value came from (a flag, a
// variable, a profile of a file and line), so a person knows what to fix.
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    /** The setting or key at fault, e.g. `serviceUrl` or `profiles.studio.serviceUrl`. */
    readonly setting?: string,
  ) {
    super(message);
  }
}
