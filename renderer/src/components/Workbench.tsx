import { useEffect } from 'react';
import { ActivityBar } from './ActivityBar';
import { SidePanel } from './SidePanel';
import { MainArea } from './MainArea';
import { BottomPanel } from './BottomPanel';
import { StatusBar } from './StatusBar';
import { CommandPalette } from './CommandPalette';
import { DatabaseBanner } from './DatabaseBanner';
import { useWorkbench } from '../store/workbench';
import { useResolvedTheme } from '../theme';
import { installKeyboard } from '../keyboard';

export function Workbench() {
  const sideVisible = useWorkbench((s) => s.sideVisible);
  const bottomVisible = useWorkbench((s) => s.bottomVisible);
  const theme = useResolvedTheme();
  useEffect(() => installKeyboard(), []);
  return (
    <div className={`workbench theme-${theme}`} data-testid="workbench" data-theme={theme}>
      <DatabaseBanner />
      <div className="workbench-body">
        <ActivityBar />
        {sideVisible ? <SidePanel /> : null}
        <div className="center column">
          <MainArea />
          {bottomVisible ? <BottomPanel /> : null}
        </div>
      </div>
      <StatusBar />
      <CommandPalette />
    </div>
  );
}
