/**
 * Editable tables of a step: name/value rows (headers, query, form fields, subtest params),
 * assertions and variables. Each cell has its own label, visually hidden where the column header
 * says it and shown when the table collapses to stacked rows on narrow screens.
 */
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { fieldError } from '../../../api/client';
import type { Assertion, Comparison, Source, Variable } from '../../../api/resources';
import { CANONICAL_COMPARISONS, SOURCES } from '../../../../../src/domain/vocabulary';
import { newAssertion, type Row, SOURCES_WITH_PROPERTY, VALUELESS } from './draft';

export const SOURCE_LABELS: Record<Source, string> = {
  response_status: 'Status code',
  response_headers: 'Header',
  response_json: 'JSON body',
  response_xml: 'XML body',
  response_text: 'Text body',
  response_time: 'Response time (ms)',
  response_size: 'Response size (bytes)',
};

const comparisonLabel = (comparison: Comparison): string => comparison.replace(/_/g, ' ');

/** The comparisons to offer: each meaning once, by its canonical name (the editor's drafts use it). */
export const comparisonOptions = () =>
  CANONICAL_COMPARISONS.map((c) => ({ value: c, label: comparisonLabel(c) }));

const PROPERTY_HINT: Partial<Record<Source, string>> = {
  response_headers: 'Header name',
  response_json: 'e.g. data.items[0].id',
  response_xml: 'XPath',
};

function CellError(props: { id: string; message: string | undefined }) {
  if (!props.message) return null;
  return (
    <small id={props.id} class="field-error">
      {props.message}
    </small>
  );
}

export function CellInput(props: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  error?: unknown;
  field?: string;
  placeholder?: string;
  disabled?: boolean;
  mono?: boolean;
}) {
  const id = useId();
  const message = props.field ? fieldError(props.error, props.field) : undefined;
  return (
    <div class={`cell${message ? ' invalid' : ''}`}>
      <label for={id} class="cell-label">
        {props.label}
      </label>
      <input
        id={id}
        class={props.mono ? 'mono' : undefined}
        value={props.value}
        placeholder={props.placeholder}
        disabled={props.disabled}
        onInput={(event) => props.onValue(event.currentTarget.value)}
        aria-invalid={message ? true : undefined}
        aria-describedby={message ? `${id}-error` : undefined}
      />
      <CellError id={`${id}-error`} message={message} />
    </div>
  );
}

export function CellSelect<T extends string>(props: {
  label: string;
  value: T;
  options: readonly { value: T; label: string }[];
  onValue: (value: T) => void;
  error?: unknown;
  field?: string;
}) {
  const id = useId();
  const message = props.field ? fieldError(props.error, props.field) : undefined;
  return (
    <div class={`cell${message ? ' invalid' : ''}`}>
      <label for={id} class="cell-label">
        {props.label}
      </label>
      <select
        id={id}
        value={props.value}
        onChange={(event) => props.onValue(event.currentTarget.value as T)}
        aria-invalid={message ? true : undefined}
        aria-describedby={message ? `${id}-error` : undefined}
      >
        {props.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      <CellError id={`${id}-error`} message={message} />
    </div>
  );
}

/** A table with a caption, column headers, one row per item, and an "Add" button under it. */
function EditTable(props: {
  caption: string;
  columns: string[];
  count: number;
  onAdd: () => void;
  addLabel: string;
  error?: unknown;
  field?: string;
  children: ComponentChildren;
}) {
  const id = useId();
  const message = props.field ? fieldError(props.error, props.field) : undefined;
  return (
    <div class="edit-table">
      <table aria-describedby={message ? `${id}-error` : undefined}>
        <caption>{props.caption}</caption>
        {props.count > 0 && (
          <thead>
            <tr>
              {props.columns.map((column) => (
                <th key={column} scope="col">
                  {column}
                </th>
              ))}
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
        )}
        <tbody>{props.children}</tbody>
      </table>
      {message && (
        <p id={`${id}-error`} class="field-error">
          {message}
        </p>
      )}
      <button type="button" class="secondary small" onClick={props.onAdd}>
        {props.addLabel}
      </button>
    </div>
  );
}

function RemoveButton(props: { label: string; onClick: () => void }) {
  return (
    <td class="row-actions">
      <button
        type="button"
        class="secondary small"
        aria-label={props.label}
        title={props.label}
        onClick={props.onClick}
      >
        ✕<span class="narrow-only"> Remove</span>
      </button>
    </td>
  );
}

const replaceAt = <T,>(list: T[], index: number, item: T): T[] =>
  list.map((x, i) => (i === index ? item : x));
const removeAt = <T,>(list: T[], index: number): T[] => list.filter((_, i) => i !== index);

/** Name/value rows: headers, query parameters, form fields, subtest params. */
export function RowsTable(props: {
  caption: string;
  nameLabel: string;
  valueLabel: string;
  rows: Row[];
  onRows: (rows: Row[]) => void;
  error?: unknown;
  field?: string;
  /** Names each row's cells for errors: `${field}/${index}/name` when true. */
  indexed?: boolean;
}) {
  const { rows, onRows } = props;
  return (
    <EditTable
      caption={props.caption}
      columns={[props.nameLabel, props.valueLabel]}
      count={rows.length}
      onAdd={() => onRows([...rows, { name: '', value: '' }])}
      addLabel={`Add ${props.nameLabel.toLowerCase()}`}
      error={props.indexed ? undefined : props.error}
      field={props.field}
    >
      {rows.map((row, index) => (
        <tr key={index}>
          <td>
            <CellInput
              label={`${props.nameLabel} ${index + 1}`}
              value={row.name}
              mono
              onValue={(name) => onRows(replaceAt(rows, index, { ...row, name }))}
              error={props.error}
              field={props.indexed ? `${props.field}/${index}/name` : undefined}
            />
          </td>
          <td>
            <CellInput
              label={`${props.valueLabel} ${index + 1}`}
              value={row.value}
              mono
              onValue={(value) => onRows(replaceAt(rows, index, { ...row, value }))}
              error={props.error}
              field={props.indexed ? `${props.field}/${index}/value` : undefined}
            />
          </td>
          <RemoveButton
            label={`Remove ${props.nameLabel.toLowerCase()} ${index + 1}`}
            onClick={() => onRows(removeAt(rows, index))}
          />
        </tr>
      ))}
    </EditTable>
  );
}

const sourceOptions = SOURCES.map((s) => ({ value: s, label: SOURCE_LABELS[s] }));

/**
 * The source and property cells of an assertion or a variable: the property is cleared and disabled
 * for sources that take none, with a hint of what it means for the others.
 */
function SourceCells(props: {
  label: string;
  source: Source;
  property: string;
  onChange: (patch: { source?: Source; property: string }) => void;
  error?: unknown;
  field: string;
}) {
  const hasProperty = SOURCES_WITH_PROPERTY.includes(props.source);
  return (
    <>
      <td>
        <CellSelect
          label={`${props.label} source`}
          value={props.source}
          options={sourceOptions}
          onValue={(source) =>
            props.onChange({ source, property: SOURCES_WITH_PROPERTY.includes(source) ? props.property : '' })
          }
          error={props.error}
          field={`${props.field}/source`}
        />
      </td>
      <td>
        <CellInput
          label={`${props.label} property`}
          value={hasProperty ? props.property : ''}
          disabled={!hasProperty}
          placeholder={hasProperty ? PROPERTY_HINT[props.source] : 'not used'}
          mono
          onValue={(property) => props.onChange({ property })}
          error={props.error}
          field={`${props.field}/property`}
        />
      </td>
    </>
  );
}

export function AssertionsTable(props: {
  assertions: Assertion[];
  onChange: (assertions: Assertion[]) => void;
  error?: unknown;
}) {
  const { assertions, onChange } = props;
  return (
    <EditTable
      caption="Assertions"
      columns={['Source', 'Property', 'Comparison', 'Value']}
      count={assertions.length}
      onAdd={() => onChange([...assertions, newAssertion()])}
      addLabel="Add assertion"
      error={props.error}
      field="/assertions"
    >
      {assertions.map((assertion, index) => {
        const n = index + 1;
        const field = `/assertions/${index}`;
        const set = (patch: Partial<Assertion>) =>
          onChange(replaceAt(assertions, index, { ...assertion, ...patch }));
        const hasValue = !VALUELESS.includes(assertion.comparison);
        return (
          <tr key={index}>
            <SourceCells
              label={`Assertion ${n}`}
              source={assertion.source}
              property={assertion.property}
              onChange={set}
              error={props.error}
              field={field}
            />
            <td>
              <CellSelect
                label={`Assertion ${n} comparison`}
                value={assertion.comparison}
                options={comparisonOptions()}
                onValue={(comparison) => set({ comparison })}
                error={props.error}
                field={`${field}/comparison`}
              />
            </td>
            <td>
              {hasValue ? (
                <CellInput
                  label={`Assertion ${n} value`}
                  value={String(assertion.value)}
                  mono
                  onValue={(value) => set({ value })}
                  error={props.error}
                  field={`${field}/value`}
                />
              ) : (
                <span class="muted small-text">no value</span>
              )}
            </td>
            <RemoveButton
              label={`Remove assertion ${n}`}
              onClick={() => onChange(removeAt(assertions, index))}
            />
          </tr>
        );
      })}
    </EditTable>
  );
}

export function VariablesTable(props: {
  variables: Variable[];
  onChange: (variables: Variable[]) => void;
  error?: unknown;
}) {
  const { variables, onChange } = props;
  return (
    <EditTable
      caption="Variables"
      columns={['Name', 'Source', 'Property']}
      count={variables.length}
      onAdd={() => onChange([...variables, { name: '', source: 'response_json', property: '' }])}
      addLabel="Add variable"
      error={props.error}
      field="/variables"
    >
      {variables.map((variable, index) => {
        const n = index + 1;
        const field = `/variables/${index}`;
        const set = (patch: Partial<Variable>) =>
          onChange(replaceAt(variables, index, { ...variable, ...patch }));
        return (
          <tr key={index}>
            <td>
              <CellInput
                label={`Variable ${n} name`}
                value={variable.name}
                mono
                onValue={(name) => set({ name })}
                error={props.error}
                field={`${field}/name`}
              />
            </td>
            <SourceCells
              label={`Variable ${n}`}
              source={variable.source}
              property={variable.property}
              onChange={set}
              error={props.error}
              field={field}
            />
            <RemoveButton
              label={`Remove variable ${n}`}
              onClick={() => onChange(removeAt(variables, index))}
            />
          </tr>
        );
      })}
    </EditTable>
  );
}
