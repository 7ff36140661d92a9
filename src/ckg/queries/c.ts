/** Definitions query for C (capture protocol: see `../extract.ts`). */

/** Function definitions, shared with C++: the name sits at the bottom of a declarator chain. */
export const C_FUNCTIONS = `
(function_definition
  declarator: (function_declarator declarator: (_) @name)
  body: (_) @body) @def.function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (_) @name))
  body: (_) @body) @def.function
(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator declarator: (function_declarator declarator: (_) @name)))
  body: (_) @body) @def.function
; Any other declarator shape (e.g. a function returning a function pointer): the name is read
; from the declarator text.
(function_definition declarator: (_) @declarator body: (_) @body) @def.function
`;

/** Structs, unions, enums and their members, shared with C++. */
export const C_TYPES = `
(struct_specifier name: (_) @name body: (field_declaration_list) @body) @def.class.struct
(union_specifier name: (_) @name body: (field_declaration_list) @body) @def.class.union
(enum_specifier name: (_) @name body: (enumerator_list) @body) @def.class.enum

; typedef struct { ... } name;
(type_definition
  type: (struct_specifier body: (field_declaration_list) @body)
  declarator: (type_identifier) @name) @def.class.struct
(type_definition
  type: (union_specifier body: (field_declaration_list) @body)
  declarator: (type_identifier) @name) @def.class.union
(type_definition
  type: (enum_specifier body: (enumerator_list) @body)
  declarator: (type_identifier) @name) @def.class.enum

; Members stand in a field or enumerator list, or in a preprocessor conditional inside one
; (\`#ifdef CONFIG_SMP\` around a struct's fields): the nodes appear nowhere else.
(field_declaration declarator: (_) @declarator) @def.field
(enumerator name: (_) @name) @def.field
`;

/** The whole C query. */
export const C_QUERY = C_FUNCTIONS + C_TYPES;

/**
 * Words the kernel (and code like it) defines as attributes, that tree-sitter cannot know are
 * macros: `asmlinkage __visible void __sched schedule(void)`, `char __user *buf`,
 * `static int __init f(void)`, `void f(void) __releases(lock)`. Read as type names or
 * declarators, they turn a definition into a syntax error or misplace its name, and a file full
 * of them is parsed again to recover. The parser sees them blanked (`blankMacros` in
 * `../capture.ts`): same length, so offsets, rows and columns stay those of the file.
 *
 * Reserved names (`__` + a letter) are blanked wherever they stand as a whole word; other words
 * only before a name, `*` or `(`, where no variable called `notrace` could stand.
 */
const RESERVED_ATTRIBUTES = [
  "__always_inline",
  "__always_unused",
  "__attribute_const__",
  "__bitwise",
  "__cacheline_aligned",
  "__cacheline_aligned_in_smp",
  "__cold",
  "__cpuidle",
  "__cpuinit",
  "__devexit",
  "__devinit",
  "__exit",
  "__exitdata",
  "__flatten",
  "__force",
  "__hot",
  "__init",
  "__init_memblock",
  "__init_or_module",
  "__initconst",
  "__initdata",
  "__initdata_memblock",
  "__initdata_or_module",
  "__iomem",
  "__irq_entry",
  "__kernel",
  "__kprobes",
  "__latent_entropy",
  "__lsm_ro_after_init",
  "__lockfunc",
  "__malloc",
  "__maybe_unused",
  "__meminit",
  "__meminitdata",
  "__must_check",
  "__net_exit",
  "__net_init",
  "__net_initdata",
  "__no_kcsan",
  "__no_sanitize_address",
  "__noclone",
  "__nocfi",
  "__nocast",
  "__noreturn",
  "__nosavedata",
  "__nostackprotector",
  "__packed",
  "__page_aligned_bss",
  "__page_aligned_data",
  "__percpu",
  "__pure",
  "__randomize_layout",
  "__private",
  "__rcu",
  "__read_mostly",
  "__ref",
  "__refdata",
  "__ro_after_init",
  "__safe",
  "__sched",
  "__softirq_entry",
  "__used",
  "__user",
  "__visible",
  "__weak",
  "____cacheline_aligned",
  "____cacheline_aligned_in_smp",
];
const PLAIN_ATTRIBUTES = [
  "asmlinkage",
  "noinline",
  "noinline_for_stack",
  "noinstr",
  "nokprobe_inline",
  "notrace",
];
/** Attribute macros with arguments (one level of parentheses inside, on one line). */
const ATTRIBUTE_CALLS = [
  "__acquires",
  "__aligned",
  "__must_hold",
  "__printf",
  "__releases",
  "__scanf",
  "__section",
];

/** The source of a regular expression matching every attribute macro to blank (see above). */
export const C_MACROS = [
  `\\b(?:${RESERVED_ATTRIBUTES.join("|")})\\b`,
  `\\b(?:${PLAIN_ATTRIBUTES.join("|")})(?=[ \\t]+[A-Za-z_*(])`,
  `\\b(?:${ATTRIBUTE_CALLS.join("|")})[ \\t]*\\((?:[^()\\n]|\\([^()\\n]*\\))*\\)`,
].join("|");
