/** A view's failure line, announced to screen readers; nothing when there is none. */
export function ErrorText({ error }: { error: string | null | undefined }) {
  return error ? (
    <p className="error-text" role="alert">
      {error}
    </p>
  ) : null;
}
