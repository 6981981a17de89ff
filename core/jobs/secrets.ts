/**
 * Secrets (API keys) for jobs. They live only here: in memory for the session in web mode, or
 * sealed by the OS keychain (Electron's safeStorage) on the desktop. They are never written to
 * SQLite, job scripts, logs or exported files; job specs carry only the variable names.
 */
export interface SecretStore {
  readonly kind: 'memory' | 'keychain';
  get(name: string): string | undefined;
  set(name: string, value: string): void;
  delete(name: string): void;
  names(): string[];
  /** Every value, for redacting logs mirrored from jobs. */
  values(): string[];
}

export class MemorySecretStore implements SecretStore {
  readonly kind: 'memory' | 'keychain' = 'memory';
  protected readonly map = new Map<string, string>();
  get(name: string): string | undefined {
    return this.map.get(name);
  }
  set(name: string, value: string): void {
    this.map.set(name, value);
  }
  delete(name: string): void {
    this.map.delete(name);
  }
  names(): string[] {
    return [...this.map.keys()].sort();
  }
  values(): string[] {
    return [...this.map.values()];
  }
}

/** What the desktop shell provides: Electron's safeStorage, which seals with the OS keychain. */
export interface Sealer {
  encrypt(plain: string): Buffer;
  decrypt(sealed: Buffer): string;
}

/**
 * The desktop store: values sealed by the keychain before they reach disk (only ciphertext is
 * persisted, through `persist`), kept in memory in plain form only while the app runs.
 */
export class KeychainSecretStore extends MemorySecretStore {
  override readonly kind = 'keychain' as const;
  constructor(
    private readonly sealer: Sealer,
    private readonly persist: { load(): Record<string, string>; save(sealed: Record<string, string>): void },
  ) {
    super();
    for (const [k, v] of Object.entries(persist.load())) {
      try {
        this.map.set(k, sealer.decrypt(Buffer.from(v, 'base64')));
      } catch {
        // A value sealed by another keychain (a copied profile) cannot be opened: leave it out.
      }
    }
  }
  override set(name: string, value: string): void {
    super.set(name, value);
    this.save();
  }
  override delete(name: string): void {
    super.delete(name);
    this.save();
  }
  private save(): void {
    const sealed: Record<string, string> = {};
    for (const [k, v] of this.map) sealed[k] = this.sealer.encrypt(v).toString('base64');
    this.persist.save(sealed);
  }
}
