export interface QuickOpenItem {
  id: string;
  label: string;
  detail?: string;
  run(): void;
}

type Provider = (query: string) => Promise<QuickOpenItem[]>;
const providers: Provider[] = [];

/** Ctrl/Cmd+P asks every provider (environments by name, recent episodes...) for matches. */
export function registerQuickOpenProvider(p: Provider): void {
  providers.push(p);
}

export async function quickOpenItems(query: string): Promise<QuickOpenItem[]> {
  const lists = await Promise.all(providers.map((p) => p(query).catch(() => [])));
  return lists.flat().slice(0, 50);
}
