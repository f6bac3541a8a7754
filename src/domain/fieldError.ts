/** One invalid field of a request, as the API reports it in a problem's `errors[]`. */
export interface FieldError {
  /** JSON Pointer to the offending field, e.g. `/components/1/text`. */
  field: string;
  code: string;
  message: string;
}
