import { useEffect, useState } from 'react';
import { useApp } from './store/app';

export type ResolvedTheme = 'light' | 'dark';

function systemTheme(): ResolvedTheme {
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/** The theme actually shown: the setting, or the system's when the setting is "system". */
export function useResolvedTheme(): ResolvedTheme {
  const setting = useApp((s) => s.settings?.theme ?? 'system');
  const [system, setSystem] = useState<ResolvedTheme>(systemTheme);
  useEffect(() => {
    const mq = window.matchMedia('(prefers-color-scheme: dark)');
    const onChange = () => setSystem(systemTheme());
    mq.addEventListener('change', onChange);
    return () => mq.removeEventListener('change', onChange);
  }, []);
  const resolved = setting === 'system' ? system : setting;
  useEffect(() => {
    document.documentElement.dataset.theme = resolved;
  }, [resolved]);
  return resolved;
}
