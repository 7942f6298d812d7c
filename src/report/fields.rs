//! A struct's fields written as entries of an enclosing JSON object, one field at a time:
//! how a [`super::Document`] puts its command's body and its preserve record at its own
//! top level in its field order, with no tree of them built in between (a
//! `serde_json::Value` of a large document takes about 30 times its size).
//!
//! Each field's value is written as a `serde_json::Value` would write it (the keys of
//! its objects in the order of their names, as documents have always been written), one
//! element at a time when the value is a list: only one sample is ever a tree.

use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};
use std::fmt;

/// A part that is not a struct (a bug in a result type, not an input).
#[derive(Debug)]
pub struct NotAStruct(std::borrow::Cow<'static, str>);

impl fmt::Display for NotAStruct {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotAStruct {}

impl ser::Error for NotAStruct {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        NotAStruct(msg.to_string().into())
    }
}

/// The names of the fields `part` writes, in its order (a field its
/// `skip_serializing_if` leaves out is not among them).
pub fn names<T: Serialize + ?Sized>(part: &T) -> Result<Vec<&'static str>, NotAStruct> {
    let mut out = Vec::new();
    part.serialize(Names(&mut out))?;
    Ok(out)
}

/// Write `part`'s field `name`, if it writes one, into `map` as an entry.
pub fn write_one<T: Serialize + ?Sized, M: SerializeMap>(
    part: &T,
    name: &str,
    map: &mut M,
) -> Result<(), M::Error> {
    part.serialize(One { name, map })
}

/// Every kind of value but a struct is refused, with the kind named.
macro_rules! only_structs {
    ($err:ty) => {
        only_structs!((), $err, refused);
    };
    ($ok:ty, $err:ty) => {
        only_structs!($ok, $err, refused);
    };
    ($ok:ty, $err:ty, $refused:ident) => {
        type SerializeTuple = Impossible<$ok, $err>;
        type SerializeTupleStruct = Impossible<$ok, $err>;
        type SerializeTupleVariant = Impossible<$ok, $err>;
        type SerializeStructVariant = Impossible<$ok, $err>;
        fn serialize_bool(self, _: bool) -> Result<$ok, $err> {
            Err($refused("a bool"))
        }
        fn serialize_i8(self, _: i8) -> Result<$ok, $err> {
            Err($refused("a number"))
        }
        fn serialize_i16(self, _: i16) -> Result<$ok, $err> {
            Err($refused("a number"))
        }
        fn serialize_i32(self, _: i32) -> Result<$ok, $err> {
            Err($refused("a number"))
        }
        fn serialize_i64(self, _: i64) -> Result<$ok, $err> {
            Err($refused("a number"))
        }
        fn serialize_u8(self, _: u8) -> Result<$ok, $err> {
            Err($refused("a number"))
        }
        fn serialize_u16(self, _: u16) -> Result<$ok, $err> {
            Err($refused("a number"))
        }
        fn serialize_u32(self, _: u32) -> Result<$ok, $err> {
            Err($refused("a number"))
        }
        fn serialize_u64(self, _: u64) -> Result<$ok, $err> {
            Err($refused("a number"))
        }
        fn serialize_f32(self, _: f32) -> Result<$ok, $err> {
            Err($refused("a number"))
        }
        fn serialize_f64(self, _: f64) -> Result<$ok, $err> {
            Err($refused("a number"))
        }
        fn serialize_char(self, _: char) -> Result<$ok, $err> {
            Err($refused("a char"))
        }
        fn serialize_str(self, _: &str) -> Result<$ok, $err> {
            Err($refused("a string"))
        }
        fn serialize_bytes(self, _: &[u8]) -> Result<$ok, $err> {
            Err($refused("bytes"))
        }
        fn serialize_none(self) -> Result<$ok, $err> {
            Err($refused("none"))
        }
        fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<$ok, $err> {
            Err($refused("an option"))
        }
        fn serialize_unit(self) -> Result<$ok, $err> {
            Err($refused("a unit"))
        }
        fn serialize_unit_struct(self, _: &'static str) -> Result<$ok, $err> {
            Err($refused("a unit struct"))
        }
        fn serialize_unit_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
        ) -> Result<$ok, $err> {
            Err($refused("a unit variant"))
        }
        fn serialize_newtype_struct<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: &T,
        ) -> Result<$ok, $err> {
            Err($refused("a newtype"))
        }
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<$ok, $err> {
            Err($refused("a newtype variant"))
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, $err> {
            Err($refused("a tuple"))
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, $err> {
            Err($refused("a tuple struct"))
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, $err> {
            Err($refused("a tuple variant"))
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, $err> {
            Err($refused("a struct variant"))
        }
    };
}

fn refused<E: ser::Error>(what: &'static str) -> E {
    E::custom(format!(
        "a document's body is written field by field and must be a struct, not {what}"
    ))
}

/// Collects the names of a struct's fields.
struct Names<'a>(&'a mut Vec<&'static str>);

impl Serializer for Names<'_> {
    type Ok = ();
    type Error = NotAStruct;
    type SerializeStruct = Self;
    type SerializeSeq = Impossible<(), NotAStruct>;
    only_structs!(NotAStruct);
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotAStruct> {
        Err(refused("a sequence"))
    }
    type SerializeMap = Impossible<(), NotAStruct>;
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotAStruct> {
        Err(refused("a map (a struct with a flattened field)"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, NotAStruct> {
        Ok(self)
    }
}

impl SerializeStruct for Names<'_> {
    type Ok = ();
    type Error = NotAStruct;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        _: &T,
    ) -> Result<(), NotAStruct> {
        self.0.push(key);
        Ok(())
    }
    fn end(self) -> Result<(), NotAStruct> {
        Ok(())
    }
}

/// Writes one field of a struct into an enclosing map.
struct One<'a, M> {
    name: &'a str,
    map: &'a mut M,
}

impl<M: SerializeMap> Serializer for One<'_, M> {
    type Ok = ();
    type Error = M::Error;
    type SerializeStruct = Self;
    type SerializeSeq = Impossible<(), M::Error>;
    only_structs!(M::Error);
    type SerializeMap = Impossible<(), M::Error>;
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, M::Error> {
        Err(refused("a map (a struct with a flattened field)"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, M::Error> {
        Err(refused("a sequence"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, M::Error> {
        Ok(self)
    }
}

impl<M: SerializeMap> SerializeStruct for One<'_, M> {
    type Ok = ();
    type Error = M::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        if key == self.name {
            self.map.serialize_entry(key, &AsValue(value))?;
        }
        Ok(())
    }
    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}

/// A value written as its `serde_json::Value` would be (keys in name order), a list one
/// element at a time and a struct one field at a time (only what is neither, an option or
/// a map, becomes a tree).
pub struct AsValue<'a, T: ?Sized>(pub &'a T);

impl<T: Serialize + ?Sized> Serialize for AsValue<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use ser::Error as _;
        match self.0.serialize(IsList) {
            Err(e) if e.0 == LIST => return self.0.serialize(Elements(s)),
            // A struct: its fields in the order of their names, each written as this
            // (a log of a million rows in one sample is never a tree either).
            Err(e) if e.0 == STRUCT => {
                let mut names = names(self.0).map_err(S::Error::custom)?;
                names.sort_unstable();
                let mut m = s.serialize_map(Some(names.len()))?;
                for name in names {
                    write_one(self.0, name, &mut m)?;
                }
                return m.end();
            }
            // A number, string, bool or null is written as its tree would write it.
            Err(e) if e.0 == SCALAR => return self.0.serialize(s),
            _ => {}
        }
        {
            serde_json::to_value(self.0)
                .map_err(S::Error::custom)?
                .serialize(s)
        }
    }
}

/// Says whether a value is a list, a struct or a scalar (by stopping with [`LIST`] where
/// a list starts, [`STRUCT`] where a struct does, [`SCALAR`] at a number, string, bool,
/// unit or none) without visiting anything in it, and without allocating: it is asked of
/// every value of every row (a 60 MiB log's million rows, issue 46's 30 s budget).
struct IsList;

const LIST: &str = "a list";
const STRUCT: &str = "a struct";
const SCALAR: &str = "a scalar";
const OTHER: &str = "neither a list, a struct nor a scalar";

/// [`IsList`]'s answer for a kind of value [`only_structs`] names.
fn kind_of(what: &'static str) -> NotAStruct {
    let scalar = matches!(
        what,
        "a bool"
            | "a number"
            | "a char"
            | "a string"
            | "none"
            | "a unit"
            | "a unit struct"
            | "a unit variant"
    );
    NotAStruct(std::borrow::Cow::Borrowed(if scalar {
        SCALAR
    } else {
        OTHER
    }))
}

impl Serializer for IsList {
    type Ok = ();
    type Error = NotAStruct;
    type SerializeStruct = Impossible<(), NotAStruct>;
    type SerializeSeq = Impossible<(), NotAStruct>;
    only_structs!((), NotAStruct, kind_of);
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotAStruct> {
        Err(NotAStruct(LIST.into()))
    }
    type SerializeMap = Impossible<(), NotAStruct>;
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotAStruct> {
        Err(NotAStruct(OTHER.into()))
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, NotAStruct> {
        Err(NotAStruct(STRUCT.into()))
    }
}

/// Writes a list into `S`, each element as [`AsValue`].
struct Elements<S>(S);

impl<S: Serializer> Serializer for Elements<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeStruct = Impossible<S::Ok, S::Error>;
    type SerializeSeq = ElementsSeq<S::SerializeSeq>;
    only_structs!(S::Ok, S::Error);
    type SerializeMap = Impossible<S::Ok, S::Error>;
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Err(refused("a map (a struct with a flattened field)"))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Ok(ElementsSeq(self.0.serialize_seq(len)?))
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        Err(refused("a struct"))
    }
}

struct ElementsSeq<Q>(Q);

impl<Q: ser::SerializeSeq> ser::SerializeSeq for ElementsSeq<Q> {
    type Ok = Q::Ok;
    type Error = Q::Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Q::Error> {
        self.0.serialize_element(&AsValue(value))
    }
    fn end(self) -> Result<Q::Ok, Q::Error> {
        self.0.end()
    }
}

/// A document's top-level fields as JSON values, for a page that shows any command's
/// fields generically: every field but `samples`, and of `samples` the count and the
/// first `rows` (only those become trees).
pub struct TopLevel {
    pub fields: serde_json::Map<String, serde_json::Value>,
    pub samples: usize,
    pub first_samples: Vec<serde_json::Value>,
}

/// [`TopLevel`] of `doc`, read back from its compact JSON ([`write_document`]'s, exact
/// with `float_roundtrip`): each field a slice of that text until it becomes a value, of
/// the samples only the first `rows`. Written and read rather than collected through a
/// serializer of its own, which compiled every result type's serialisation once more
/// (about 0.2 MB of the release binary; issue 46 point 6).
pub fn top_level(doc: &super::Document, rows: usize) -> serde_json::Result<TopLevel> {
    use serde_json::value::RawValue;
    let mut text = Vec::with_capacity(4 << 10);
    write_document(doc, &mut text, false)?;
    let mut out = TopLevel {
        fields: serde_json::Map::new(),
        samples: 0,
        first_samples: Vec::new(),
    };
    for (key, raw) in serde_json::from_slice::<super::Fields>(&text)?.0 {
        if key == "samples" {
            if let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(raw.get()) {
                out.samples = items.len();
                out.first_samples = items
                    .iter()
                    .take(rows)
                    .map(|r| serde_json::from_str(r.get()))
                    .collect::<serde_json::Result<_>>()?;
                continue;
            }
        }
        out.fields.insert(key, serde_json::from_str(raw.get())?);
    }
    Ok(out)
}

/// How a document's JSON is laid out: pretty (files, the terminal) or compact (the run
/// history's store). One formatter type for both, so each result type's serialisation
/// is compiled once, into [`write_document`]'s one serializer, and not once for each
/// writer and layout a caller happens to use (five copies of every body's fields made
/// a fifth of the release binary; issue 46 point 6).
pub(crate) enum Layout {
    Compact(serde_json::ser::CompactFormatter),
    Pretty(serde_json::ser::PrettyFormatter<'static>),
}

/// Each method [`serde_json::ser::PrettyFormatter`] has its own of, passed to the layout's
/// formatter; every other one is the same for both.
macro_rules! by_layout {
    ($(fn $name:ident(&mut self, w: &mut W $(, $arg:ident: $ty:ty)?);)*) => {
        $(fn $name<W: ?Sized + std::io::Write>(&mut self, w: &mut W $(, $arg: $ty)?) -> std::io::Result<()> {
            match self {
                Layout::Compact(f) => f.$name(w $(, $arg)?),
                Layout::Pretty(f) => f.$name(w $(, $arg)?),
            }
        })*
    };
}

impl serde_json::ser::Formatter for Layout {
    by_layout! {
        fn begin_array(&mut self, w: &mut W);
        fn end_array(&mut self, w: &mut W);
        fn begin_array_value(&mut self, w: &mut W, first: bool);
        fn end_array_value(&mut self, w: &mut W);
        fn begin_object(&mut self, w: &mut W);
        fn end_object(&mut self, w: &mut W);
        fn begin_object_key(&mut self, w: &mut W, first: bool);
        fn begin_object_value(&mut self, w: &mut W);
        fn end_object_value(&mut self, w: &mut W);
    }
}

/// Write `doc` as JSON to `w`, pretty or compact: the one serializer every document is
/// written with (see [`Layout`]).
pub(crate) fn write_document(
    doc: &super::Document,
    w: &mut dyn std::io::Write,
    pretty: bool,
) -> serde_json::Result<()> {
    let layout = if pretty {
        Layout::Pretty(serde_json::ser::PrettyFormatter::new())
    } else {
        Layout::Compact(serde_json::ser::CompactFormatter)
    };
    doc.serialize(&mut serde_json::Serializer::with_formatter(w, layout))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{results, Body, Document, Target};

    /// The HTML view's fields are the document's JSON fields (all but `samples`), its
    /// sample count is the JSON's and its first rows are the JSON's first samples, values
    /// exact (a float that needs all 17 digits among them).
    #[test]
    fn the_view_of_a_document_is_its_json_fields_and_first_samples() {
        use crate::capacity::verify::{Phase, ThroughputSample};
        let sample = |offset| ThroughputSample {
            phase: Phase::Read,
            offset,
            bytes: 4096,
            ns: 1000,
            bytes_per_s: 18732.539850376805 + offset as f64,
        };
        let mut d = Document::new(
            Target::Spec(results::SpecTarget {
                spec: "sim:sd-16g".into(),
            }),
            Body::Verify(results::VerifyResult {
                samples: (0..5).map(|i| sample(i * 4096)).collect(),
                checked_bytes: 20480,
                files_kept: Some(true),
                ..Default::default()
            }),
        );
        d.session = Some(results::WriteRecord {
            journal: Some("/tmp/j".into()),
            ..Default::default()
        });
        let whole: serde_json::Value = serde_json::from_str(&d.to_json()).unwrap();
        let mut want = whole.as_object().unwrap().clone();
        let samples = want.remove("samples").unwrap();
        let view = top_level(&d, 3).unwrap();
        assert_eq!(view.fields, want);
        assert_eq!(view.samples, 5);
        assert_eq!(view.first_samples, samples.as_array().unwrap()[..3]);
        assert!(view.fields.contains_key("journal") && view.fields.contains_key("checked_bytes"));
    }
}
