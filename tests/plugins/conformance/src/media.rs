//! The binary payloads: a real 1×1 PNG and a real, tiny WAV.

/// A 1×1 PNG, one red pixel (8-bit RGB), with correct chunk CRCs.
#[rustfmt::skip]
pub const PNG: [u8; 69] = [
    // Signature.
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a,
    // IHDR: length 13; width 1, height 1, bit depth 8, colour type 2 (RGB), no interlace; CRC.
    0x00, 0x00, 0x00, 0x0d, b'I', b'H', b'D', b'R',
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00,
    0x90, 0x77, 0x53, 0xde,
    // IDAT: length 12; zlib of the scanline [filter 0, ff 00 00]; CRC.
    0x00, 0x00, 0x00, 0x0c, b'I', b'D', b'A', b'T',
    0x78, 0xda, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00,
    0xf7, 0x03, 0x41, 0x43,
    // IEND: length 0; CRC.
    0x00, 0x00, 0x00, 0x00, b'I', b'E', b'N', b'D',
    0xae, 0x42, 0x60, 0x82,
];

/// A WAV file: 8 kHz, mono, 8-bit PCM, 8 samples (one millisecond of a small square wave).
#[rustfmt::skip]
pub const WAV: [u8; 52] = [
    // RIFF header: size of everything after these 8 bytes (52 - 8 = 44), then "WAVE".
    b'R', b'I', b'F', b'F', 44, 0, 0, 0, b'W', b'A', b'V', b'E',
    // "fmt " chunk, 16 bytes: PCM (1), 1 channel, 8000 Hz, 8000 bytes/s, block align 1, 8 bits.
    b'f', b'm', b't', b' ', 16, 0, 0, 0,
    1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0, 1, 0, 8, 0,
    // "data" chunk, 8 bytes: unsigned 8-bit samples around the midpoint 128.
    b'd', b'a', b't', b'a', 8, 0, 0, 0,
    0xa0, 0xa0, 0xa0, 0xa0, 0x60, 0x60, 0x60, 0x60,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn be32(bytes: &[u8]) -> u32 {
        u32::from_be_bytes(bytes[..4].try_into().unwrap())
    }

    fn le32(bytes: &[u8]) -> u32 {
        u32::from_le_bytes(bytes[..4].try_into().unwrap())
    }

    fn le16(bytes: &[u8]) -> u16 {
        u16::from_le_bytes(bytes[..2].try_into().unwrap())
    }

    /// The CRC-32 PNG uses (IEEE, reflected), bit by bit.
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in bytes {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn png_has_signature_ihdr_and_valid_chunks() {
        assert_eq!(&PNG[..8], b"\x89PNG\r\n\x1a\n");
        let mut rest = &PNG[8..];
        let mut kinds = Vec::new();
        while !rest.is_empty() {
            let length = be32(rest) as usize;
            let (kind, data) = (&rest[4..8], &rest[8..8 + length]);
            assert_eq!(
                be32(&rest[8 + length..]),
                crc32(&rest[4..8 + length]),
                "CRC of {kind:?}"
            );
            if kind == b"IHDR" {
                assert_eq!(length, 13);
                assert_eq!((be32(data), be32(&data[4..])), (1, 1), "1×1");
                assert_eq!(&data[8..], [8, 2, 0, 0, 0], "8-bit RGB, no interlace");
            }
            kinds.push(kind.to_vec());
            rest = &rest[12 + length..];
        }
        assert_eq!(kinds, [b"IHDR".to_vec(), b"IDAT".to_vec(), b"IEND".to_vec()]);
    }

    #[test]
    fn wav_has_consistent_riff_fmt_and_data_chunks() {
        assert_eq!(&WAV[..4], b"RIFF");
        assert_eq!(le32(&WAV[4..]) as usize, WAV.len() - 8);
        assert_eq!(&WAV[8..12], b"WAVE");

        assert_eq!(&WAV[12..16], b"fmt ");
        assert_eq!(le32(&WAV[16..]), 16);
        let fmt = &WAV[20..36];
        let (format, channels, rate) = (le16(fmt), le16(&fmt[2..]), le32(&fmt[4..]));
        let (byte_rate, block_align, bits) = (le32(&fmt[8..]), le16(&fmt[12..]), le16(&fmt[14..]));
        assert_eq!((format, channels, rate, bits), (1, 1, 8000, 8));
        assert_eq!(block_align, channels * bits / 8);
        assert_eq!(byte_rate, rate * u32::from(block_align));

        assert_eq!(&WAV[36..40], b"data");
        let data_len = le32(&WAV[40..]) as usize;
        assert!(data_len > 0);
        assert_eq!(44 + data_len, WAV.len());
    }
}
