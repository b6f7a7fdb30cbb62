/**
 * A model's validation errors as the Service renders them (`{"message": {attr: [texts]}}`,
 * reference §6.1): attributes in the order their first error was added, texts in order.
 */
export class ValidationErrors {
  readonly errors: Record<string, string[]> = {};

  add(attribute: string, message: string): void {
    (this.errors[attribute] ??= []).push(message);
  }

  has(attribute: string): boolean {
    return (this.errors[attribute]?.length ?? 0) > 0;
  }

  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }
}
