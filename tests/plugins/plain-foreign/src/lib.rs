//! A plain component that imports `acme:thing/gadget`, an interface no host of Warden's
//! provides: Warden must refuse it at load, naming the import.

wit_bindgen::generate!({
    path: "wit",
    world: "plain-foreign",
});

struct PlainForeign;

impl Guest for PlainForeign {
    fn use_gadget() -> u32 {
        acme::thing::gadget::poke()
    }
}

export!(PlainForeign);
