//! `#[derive(Key)]` for mergepath: a user struct becomes a key type the GPU kernels can sort,
//! merge and search. Use it through `mergepath::Key` (this crate is re-exported there).
//!
//! ```ignore
//! #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
//! #[repr(C)]
//! #[key(order = "score desc, id asc")]
//! #[key(comparator(ByX, cuda = "a.x < b.x", rust = "|a, b| a.x < b.x"))]
//! struct Hit { score: f32, id: u32, x: i64 }
//! ```
//!
//! - The struct must be `#[repr(C)]`, without generics, with fields of the built-in numeric
//!   types (`u8`..`u64`, `i8`..`i64`, `f32`, `f64`) or arrays of them (`[u8; 16]`), and no
//!   padding (add explicit fields). Named fields or a tuple struct (`struct ByPopcount(u32)`):
//!   in `order` a tuple struct's fields are `0`, `1`, ..., in CUDA expressions `f0`, `f1`, ....
//! - Keys of at most 16 bytes get kernels of their own and every algorithm. Wider structs are
//!   *records* (a 64-byte row by `score desc, id`): no kernels are compiled for them, and their
//!   sorts (`sort_keys`, `sort_keys_copy`, `sort_pairs`, `sort_indices`, the host-slice sorts)
//!   sort each record's order packed into `u64` words with its position (one stable pass per
//!   word, the last first) and gather the records once, so a record's bytes move once instead
//!   of once per merge pass. Merges, searches, set operations, segmented sorts, multiway merges
//!   and runs of records go by one `u64` key per record and gather the records once: the
//!   packed word where the order fits 64 bits, else the records' device addresses, compared
//!   as the records they point to by kernels the derive compiles for the field order. A
//!   custom comparator on a record gets such kernels too: its sorts sort the addresses with
//!   the positions, its other algorithms run on the addresses. An order of more than 32
//!   elements (an array counts each element) is a compile error.
//! - `order` (default: every field ascending, in declaration order) is the field-order
//!   comparator: `mergepath::Less` sorts by it, `mergepath::Greater` by its reverse. Floats use
//!   the IEEE total order, as the built-in keys; arrays compare lexicographically (element 0
//!   first), `desc` reversing the whole array's order. Fields the order leaves out are carried
//!   with the key, never compared. Where the order's fields fit 64 bits the GPU
//!   compares one packed integer per key; where they are every field of an 8-byte key, key
//!   sorts sort the packed integers (as fast as `u64` keys: the first pass packs them as it
//!   reads them, the last unpacks them as it writes them).
//! - Each `comparator(Name, cuda = "...", rust = "...")` defines a comparator type `Name`: a CUDA
//!   expression in `a` and `b` (the two keys, `const T&`) and its Rust twin, a closure on
//!   `(&T, &T)`, both answering "does `a` go strictly before `b`" (a strict weak order).
//! - The CUDA struct (`mergepath_user::Name`) and the functors (`mergepath_user::Name_less`,
//!   `_greater`, one per custom comparator) come from `mergepath_build::DerivedKey`, which
//!   also writes them as a header, `<mergepath_user/Name.cuh>`, for a build script's own
//!   kernels (`mergepath_build::Kernels::keys`): those kernels compare a key as mergepath's do.
//! - At expansion the kernel templates are compiled with nvcc for the type and each comparator
//!   (cached by content hash under the target directory) and embedded, so nothing is compiled
//!   at run time. A CUDA expression that does not compile is a compile error here, with nvcc's
//!   message. The CUDA struct's size, alignment and field offsets are checked against Rust's in
//!   both languages.

use mergepath_build::{CudaComparator, DerivedKey, KeyField};
use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;
use syn::{parse_macro_input, DeriveInput, Error, Ident};

/// See the crate documentation.
#[proc_macro_derive(Key, attributes(key))]
pub fn derive_key(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(&input).unwrap_or_else(Error::into_compile_error).into()
}

/// A comparator's Rust side.
struct RustComparator {
    /// The Rust type implementing `mergepath::Comparator` (a path for Less/Greater).
    rust_type: TokenStream2,
    /// The body of `is_less(&self, a, b)`.
    is_less: TokenStream2,
    /// A new unit struct to declare (custom comparators).
    declare: Option<Ident>,
}

/// The Rust side of each of `key.comparators()`: `Less` (the field order), `Greater` (its
/// reverse), then the custom comparators, declared here.
fn rust_comparators(key: &DerivedKey) -> syn::Result<Vec<RustComparator>> {
    let name = &key.name;
    let mut out = vec![
        RustComparator { rust_type: quote!(::mergepath::Less), is_less: rust_field_order(&key.fields, &key.order), declare: None },
        RustComparator {
            rust_type: quote!(::mergepath::Greater),
            is_less: quote! { <::mergepath::Less as ::mergepath::Comparator<#name>>::is_less(&::mergepath::Less, b, a) },
            declare: None,
        },
    ];
    for custom in &key.customs {
        let (ident, rust) = (&custom.ident, &custom.rust);
        let closure: syn::Expr = rust.parse().map_err(|e| Error::new(rust.span(), format!("`rust` must be a closure |a, b| ...: {e}")))?;
        out.push(RustComparator {
            rust_type: quote!(#ident),
            // Through a generic call, so the closure's parameter types are inferred.
            is_less: quote! {
                fn call<F: Fn(&#name, &#name) -> bool>(f: F, a: &#name, b: &#name) -> bool { f(a, b) }
                call(#closure, a, b)
            },
            declare: Some(ident.clone()),
        });
    }
    Ok(out)
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let key = DerivedKey::parse(input)?;
    if key.is_record() {
        return record(&key, &input.vis);
    }
    let name = &key.name;
    let cuda = key.comparators();
    let rust = rust_comparators(&key)?;
    let fatbins = compile(&key, &cuda)?;
    // Keys wider than 8 bytes sort by their field order packed into u64 words
    // (`Comparator::SORT_BY_WORDS`): the words and positions move through the passes, and each
    // key once, at the end.
    let sort_words = (key.size > 8).then(|| packed_order(&key.fields, &key.order_elements()));
    let vis = &input.vis;
    let impls = cuda.iter().zip(&rust).zip(&fatbins).map(|((c, r), fatbin)| {
        let (rust_type, cname, functor, body) = (&r.rust_type, &c.name, &c.functor, &r.is_less);
        let kernels = embedded(fatbin);
        let declare = declaration(name, r, vis);
        let packed = match c.packed_u64 {
            Some(descending) => quote!(::core::option::Option::Some(#descending)),
            None => quote!(::core::option::Option::None),
        };
        let by_words = match (&sort_words, c.field_order) {
            (Some(words), Some(descending)) => quote! {
                const SORT_BY_WORDS: ::core::option::Option<::mergepath::RecordOrder> =
                    ::core::option::Option::Some(::mergepath::RecordOrder { fields: &[#(#words),*], descending: #descending, by_address: ::core::option::Option::None });
            },
            _ => quote!(),
        };
        quote! {
            #declare
            impl ::mergepath::Comparator<#name> for #rust_type {
                const NAME: &'static str = #cname;
                const CUDA_FUNCTOR: &'static str = #functor;
                const KERNELS: &'static [u8] = #kernels;
                const PACKED_U64: ::core::option::Option<bool> = #packed;
                #by_words
                fn is_less(&self, a: &#name, b: &#name) -> bool {
                    #body
                }
            }
        }
    });
    let key_impls = key_impls(&key);
    Ok(quote! {
        #key_impls
        // Read here so cargo rebuilds (and this macro recompiles the kernels) when they change.
        const _: [Option<&str>; 2] = [option_env!("MERGEPATH_CUDA_ARCHS"), option_env!("NVCC")];
        #(#impls)*
    })
}

/// A compiled module's bytes, embedded (empty where nothing is compiled).
fn embedded(fatbin: &Option<std::path::PathBuf>) -> TokenStream2 {
    match fatbin {
        Some(path) => {
            let path = path.to_string_lossy();
            quote!(include_bytes!(#path))
        }
        None => quote!(&[]),
    }
}

/// The unit struct of a custom comparator, `vis` as the key.
fn declaration(name: &Ident, r: &RustComparator, vis: &syn::Visibility) -> Option<TokenStream2> {
    r.declare.as_ref().map(|ident| {
        let doc = format!("Comparator `{ident}` on [`{name}`], from `#[key(comparator(...))]`.");
        quote! {
            #[doc = #doc]
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
            #vis struct #ident;
        }
    })
}

/// The impls every derived key has: `Key` (its CUDA twin's name), cudarc's `DeviceRepr` and
/// `ValidAsZeroBits`, the layout checked against the CUDA struct's (size, alignment, field
/// offsets), and the testing kit's `TestKey`.
fn key_impls(key: &DerivedKey) -> TokenStream2 {
    let (name, fields, size, align) = (&key.name, &key.fields, key.size, key.align);
    let cuda_type = key.cuda_type();
    let device_align = key.device_align();
    let offset_checks = fields.iter().map(|KeyField { member, offset, .. }| quote! { assert!(::core::mem::offset_of!(#name, #member) == #offset); });
    let testing = test_key_impl(name, fields);
    quote! {
        #testing
        impl ::mergepath::Key for #name {
            const CUDA_TYPE: &'static str = #cuda_type;
            const DEVICE_ALIGN: usize = #device_align;
        }
        // SAFETY: the struct is repr(C) plain old data (numeric fields, no padding: checked
        // above), so its bytes are the device value and all-zero bytes are a valid value.
        unsafe impl ::mergepath::cudarc::driver::DeviceRepr for #name {}
        // SAFETY: as above.
        unsafe impl ::mergepath::cudarc::driver::ValidAsZeroBits for #name {}
        const _: () = {
            assert!(::core::mem::size_of::<#name>() == #size, "mergepath: CUDA layout mismatch");
            assert!(::core::mem::align_of::<#name>() == #align, "mergepath: CUDA layout mismatch");
            #(#offset_checks)*
        };
    }
}

/// A record wider than the kernels' key tiles: no kernels of its own; its `order` (checked by
/// `DerivedKey::parse`) becomes `Comparator::RECORD` of `Less` and `Greater`, so sorts sort
/// its packed order, word by word, with the `u64` kernels and gather the records by position.
/// Each custom comparator, and a field order of several words, gets a module on the records'
/// device addresses (`RecordOrder::by_address`; `Greater` uses `Less`'s, reversed).
/// `CUDA_FUNCTOR` names the functors of the key's header (`mergepath_build::Kernels::keys`),
/// for a user's own kernels.
fn record(key: &DerivedKey, vis: &syn::Visibility) -> syn::Result<TokenStream2> {
    let name = &key.name;
    let packed = packed_order(&key.fields, &key.order_elements());
    let cuda = key.comparators();
    let rust = rust_comparators(key)?;
    // Modules: the field order's (`less`'s) where it spans several words, then the customs'.
    let multi_word = key.order_bits() > 64;
    let units: Vec<_> = cuda.iter().enumerate().filter(|&(i, c)| c.field_order.is_none() || (i == 0 && multi_word)).map(|(_, c)| c.clone()).collect();
    let fatbins = compile(key, &units)?;
    // Each module in one static, which every constant naming it refers to.
    let statics: Vec<Ident> = units.iter().map(|c| Ident::new(&format!("__mergepath_{name}_{}_kernels", c.name), Span::call_site())).collect();
    let static_defs = statics.iter().zip(&fatbins).map(|(ident, fatbin)| embedded_static(ident, fatbin));
    let field_order_address = match multi_word {
        true => {
            let kernels = &statics[0];
            quote!(::core::option::Option::Some(&#kernels))
        }
        false => quote!(::core::option::Option::None),
    };
    let key_impls = key_impls(key);
    let impls = cuda.iter().zip(&rust).enumerate().map(|(i, (c, r))| {
        let (rust_type, cname, functor, body) = (&r.rust_type, &c.name, &c.functor, &r.is_less);
        // Less and Greater sort by the packed order with the u64 kernels; a custom comparator
        // by the records' addresses with its own.
        let (kernels, record) = match c.field_order {
            Some(descending) => (
                quote!(<::mergepath::Less as ::mergepath::Comparator<u64>>::KERNELS),
                quote!(::mergepath::RecordOrder { fields: &[#(#packed),*], descending: #descending, by_address: #field_order_address }),
            ),
            None => {
                let kernels = &statics[i - 2 + usize::from(multi_word)];
                (quote!(&#kernels), quote!(::mergepath::RecordOrder { fields: &[], descending: false, by_address: ::core::option::Option::Some(&#kernels) }))
            }
        };
        let declare = declaration(name, r, vis);
        quote! {
            #declare
            impl ::mergepath::Comparator<#name> for #rust_type {
                const NAME: &'static str = #cname;
                const CUDA_FUNCTOR: &'static str = #functor;
                const KERNELS: &'static [u8] = #kernels;
                const RECORD: ::core::option::Option<::mergepath::RecordOrder> = ::core::option::Option::Some(#record);
                fn is_less(&self, a: &#name, b: &#name) -> bool {
                    #body
                }
            }
        }
    });
    Ok(quote! {
        #key_impls
        #(#static_defs)*
        #(#impls)*
    })
}

/// A compiled module's bytes as the static `ident` (empty where nothing is compiled): the
/// constants that name it share its one copy, so the module is embedded once and loaded once
/// (`Gpu` caches modules by their address).
fn embedded_static(ident: &Ident, fatbin: &Option<std::path::PathBuf>) -> TokenStream2 {
    let (len, bytes) = match fatbin {
        Some(path) => {
            let path = path.to_string_lossy();
            (quote!(include_bytes!(#path).len()), quote!(*include_bytes!(#path)))
        }
        None => (quote!(0), quote!([])),
    };
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        static #ident: [u8; #len] = #bytes;
    }
}

/// The order's elements (field, array element, descending) as the `RecordField`s of a packed
/// order: they fill 64-bit words in order, none straddling two, so the packed words, compared
/// lexicographically, are the field order. In each word the first element is highest, as the
/// packing of keys of at most 64 bits.
fn packed_order(fields: &[KeyField], elements: &[(usize, usize, bool)]) -> Vec<TokenStream2> {
    let mut words: Vec<Vec<(usize, usize, bool)>> = vec![Vec::new()];
    let mut used = 0;
    for &(i, e, desc) in elements {
        let bits = fields[i].elem.size * 8;
        if used + bits > 64 {
            words.push(Vec::new());
            used = 0;
        }
        words.last_mut().unwrap().push((i, e, desc));
        used += bits;
    }
    let mut packed = Vec::new();
    for (word, members) in words.iter().enumerate() {
        let mut shift: usize = members.iter().map(|&(i, _, _)| fields[i].elem.size * 8).sum();
        for &(i, e, desc) in members {
            let f = &fields[i];
            shift -= f.elem.size * 8;
            let offset = (f.offset + e * f.elem.size) as u32;
            let (bytes, sh, w) = (f.elem.size as u8, shift as u8, word as u8);
            let (signed, float) = (f.elem.cuda.starts_with("int"), f.elem.float);
            packed.push(quote! {
                ::mergepath::RecordField { offset: #offset, bytes: #bytes, signed: #signed, float: #float, word: #w, shift: #sh, descending: #desc }
            });
        }
    }
    packed
}

/// The body of the field order's `is_less(a, b)` in Rust: field by field in `order`, floats in
/// the total order, arrays lexicographically (element 0 first), `desc` reversing a field.
fn rust_field_order(fields: &[KeyField], order: &[(usize, bool)]) -> TokenStream2 {
    let compares = order.iter().map(|&(i, desc)| {
        let member = &fields[i].member;
        let first = if desc { quote!(::core::cmp::Ordering::Greater) } else { quote!(::core::cmp::Ordering::Less) };
        match fields[i].len {
            None => quote! {
                match ::mergepath::TotalOrd::total_order(&a.#member, &b.#member) {
                    ::core::cmp::Ordering::Equal => {}
                    o => return o == #first,
                }
            },
            Some(_) => quote! {
                for (x, y) in a.#member.iter().zip(b.#member.iter()) {
                    match ::mergepath::TotalOrd::total_order(x, y) {
                        ::core::cmp::Ordering::Equal => {}
                        o => return o == #first,
                    }
                }
            },
        }
    });
    quote! { #(#compares)* false }
}

/// `mergepath::testing::TestKey` for the key, field by field: its strategy draws each field from
/// the field type's strategy; its specials are each field's specials with the other fields
/// zero. Inside `mergepath::__testing_items!`, which keeps it only where mergepath's `testing`
/// feature is on.
fn test_key_impl(name: &Ident, fields: &[KeyField]) -> TokenStream2 {
    let kit = quote!(::mergepath::testing);
    // Nested pairs `(f1, (f2, (.., fn)))`: proptest's tuples stop at 12 fields.
    let vars: Vec<Ident> = (0..fields.len()).map(|i| Ident::new(&format!("field{i}"), Span::call_site())).collect();
    let (mut strategy, mut pattern) = (None::<TokenStream2>, None::<TokenStream2>);
    for (f, var) in fields.iter().zip(&vars).rev() {
        let elem = &f.elem_ty;
        let element = quote!(<#elem as #kit::TestKey>::key_strategy());
        let field = match f.len {
            None => element,
            Some(n) => quote! {
                #kit::proptest::strategy::Strategy::prop_map(#kit::proptest::collection::vec(#element, #n), |v| <[#elem; #n]>::try_from(v).expect("n elements"))
            },
        };
        (strategy, pattern) = match (strategy, pattern) {
            (Some(s), Some(p)) => (Some(quote!((#field, #s))), Some(quote!((#var, #p)))),
            _ => (Some(field), Some(quote!(#var))),
        };
    }
    let members = fields.iter().map(|f| &f.member);
    let specials = fields.iter().map(|f| {
        let (member, elem) = (&f.member, &f.elem_ty);
        let place = match f.len {
            None => quote!(key.#member),
            Some(_) => quote!(key.#member[0]),
        };
        quote! {
            for special in <#elem as #kit::TestKey>::specials() {
                let mut key: #name = #kit::zeroed();
                #place = special;
                out.push(key);
            }
        }
    });
    quote! {
        ::mergepath::__testing_items! {
            impl #kit::TestKey for #name {
                fn key_strategy() -> #kit::proptest::strategy::BoxedStrategy<Self> {
                    #kit::proptest::strategy::Strategy::boxed(#kit::proptest::strategy::Strategy::prop_map(#strategy, |#pattern| #name { #(#members: #vars),* }))
                }
                fn specials() -> ::std::vec::Vec<Self> {
                    let mut out = ::std::vec::Vec::new();
                    #(#specials)*
                    out
                }
            }
        }
    }
}

/// Compiles the kernels for every comparator (in parallel, cached); the fatbin paths, or None
/// everywhere on docs.rs and in checked builds.
fn compile(key: &DerivedKey, comparators: &[CudaComparator]) -> syn::Result<Vec<Option<std::path::PathBuf>>> {
    use mergepath_build::{cached_toolkit_nvcc, cuda_archs, find_nvcc, instantiation_source, mergepath_tuning, KernelBuild, KernelCode};
    if std::env::var_os("DOCS_RS").is_some() || comparators.is_empty() {
        return Ok(comparators.iter().map(|_| None).collect());
    }
    let name = &key.name;
    let fail = |span: Span, msg: String| Error::new(span, msg);
    let target = std::path::Path::new(env!("MERGEPATH_DERIVE_TARGET_DIR"));
    let nvcc = find_nvcc()
        .map_err(|e| fail(name.span(), e))?
        .or_else(|| cached_toolkit_nvcc(target))
        .ok_or_else(|| fail(name.span(), "mergepath: nvcc not found for #[derive(Key)] (NVCC, CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda, or the compiler mergepath's build installs)".into()))?;
    let archs = cuda_archs().map_err(|e| fail(name.span(), e))?;
    let tuning = mergepath_tuning().map_err(|e| fail(name.span(), e))?;
    let dir = target.join("mergepath-derive");
    // A macro cannot see the profile of the crate it expands in; it is built in the same
    // profile, so its own debug assertions say whether that is the dev profile.
    let code = KernelCode::for_build(cfg!(debug_assertions)).map_err(|e| fail(name.span(), e))?;
    let build = KernelBuild::new(nvcc, &archs, code, &tuning, &dir.join("include"), target, dir.join("cu")).map_err(|e| fail(name.span(), e))?;
    let units: Vec<(String, String)> = comparators
        .iter()
        .map(|c| {
            let (cuda_key, functor) = key.instantiation(c);
            let source = instantiation_source(&format!("key {name}, comparator {}", c.name), &key.unit_declarations(c), &cuda_key, &functor);
            (format!("{name}_{}", c.name), source)
        })
        .collect();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(units.len());
    let failures = build.compile(&units, workers);
    if let Some((unit, out)) = failures.first() {
        let c = comparators.iter().find(|c| format!("{name}_{}", c.name) == *unit).expect("a failed unit is a comparator's");
        return Err(fail(c.span, format!("nvcc could not compile the kernels of `{name}` with comparator `{}`:\n{}", c.name, nvcc_errors(out))));
    }
    // A checked build's kernels are compiled, not embedded (KernelCode::Check).
    Ok(units.iter().map(|(n, s)| code.embedded().then(|| build.fatbin_path(n, s))).collect())
}

/// nvcc's diagnostics from its output (the command line dropped), with the generated file's
/// path cut to its name, so the message reads the same on every machine.
fn nvcc_errors(output: &str) -> String {
    let mut lines = Vec::new();
    for line in output.lines().skip(1).filter(|l| !l.trim().is_empty()).take(24) {
        let mut line = line.to_string();
        if let Some(end) = line.find(".cu") {
            let path = line[..end].rfind(['"', ' ']).map_or(0, |i| i + 1);
            let name = line[..end].rfind('/').map_or(path, |i| i + 1).max(path);
            let file = &line[name..end];
            let file = file.rsplit_once('-').map_or(file, |(stem, pid)| if pid.bytes().all(|b| b.is_ascii_digit()) { stem } else { file });
            line = format!("{}{file}{}", &line[..path], &line[end..]);
        }
        lines.push(line);
    }
    lines.join("\n")
}
