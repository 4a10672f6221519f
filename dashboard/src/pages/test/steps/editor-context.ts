import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { StepType } from '../../../api/resources';
import type { DraftStep } from './draft';

/** What every step of the editor reaches without props: the draft's operations and the view's state. */
export interface EditorValue {
  bucket: string;
  testId: string;
  teamId: string | undefined;
  steps: DraftStep[];
  update: (key: string, change: (step: DraftStep) => DraftStep) => void;
  add: (type: StepType, parent: string | null) => void;
  remove: (key: string) => void;
  duplicate: (key: string) => void;
  /** Moves a step and says so; `focus` names the control of the moved step to focus afterwards. */
  move: (key: string, parent: string | null, index: number, focus?: string) => void;
  expanded: ReadonlySet<string>;
  setExpanded: (key: string, open: boolean) => void;
  /** The save error placed on this step, its field relative to the step (`/url`). */
  errorOf: (key: string) => unknown;
}

export const EditorContext = createContext<EditorValue | null>(null);

export function useEditor(): EditorValue {
  const value = useContext(EditorContext);
  if (!value) throw new Error('useEditor outside the steps editor');
  return value;
}
