//! Compile-time checks of layouts and auto traits, in the spirit of the
//! `static_assertions` crate, written out so that a user's lockfile holds
//! one dependency less. Each expands to a constant or an uncalled closure:
//! no code, no symbol.

/// Fails the build unless the constant expression is true.
macro_rules! const_assert {
    ($cond:expr $(,)?) => {
        const _: () = assert!($cond);
    };
}
pub(crate) use const_assert;

/// Fails the build unless the two constant integers are equal.
macro_rules! const_assert_eq {
    ($left:expr, $right:expr $(,)?) => {
        const _: () = assert!($left == $right);
    };
}
pub(crate) use const_assert_eq;

/// Fails the build unless the two types have the same size.
macro_rules! assert_eq_size {
    ($left:ty, $right:ty $(,)?) => {
        const _: () = assert!(::core::mem::size_of::<$left>() == ::core::mem::size_of::<$right>());
    };
}
pub(crate) use assert_eq_size;

/// Fails the build unless the type implements every trait named.
macro_rules! assert_impl_all {
    ($type:ty: $($trait:path),+ $(,)?) => {
        const _: fn() = || {
            fn implements_all<T: ?Sized $(+ $trait)+>() {}
            implements_all::<$type>();
        };
    };
}
pub(crate) use assert_impl_all;

/// Fails the build if the type implements any trait named: with one, the
/// `some_item` lookup below has two candidate impls and is ambiguous.
macro_rules! assert_not_impl_any {
    ($type:ty: $($trait:path),+ $(,)?) => {
        const _: fn() = || {
            trait AmbiguousIfImpl<A> {
                fn some_item() {}
            }
            impl<T: ?Sized> AmbiguousIfImpl<()> for T {}
            $({
                #[allow(dead_code)]
                struct Invalid;
                impl<T: ?Sized + $trait> AmbiguousIfImpl<Invalid> for T {}
            })+
            let _ = <$type as AmbiguousIfImpl<_>>::some_item;
        };
    };
}
pub(crate) use assert_not_impl_any;
