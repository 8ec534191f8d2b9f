/// Generated sample images, so the demo needs no files and no network.
enum SampleImages {
    static let names = ["quadrants", "sunrise", "checkerboard"]

    static func image(named name: Substring) -> Image? {
        switch name {
        case "quadrants": quadrants
        case "sunrise": sunrise
        case "checkerboard": checkerboard
        default: nil
        }
    }

    /// Four flat quadrants, red, green, blue and white: easy to check after scaling.
    static let quadrants = generate(width: 320, height: 240) { x, y, width, height in
        switch (x < width / 2, y < height / 2) {
        case (true, true): RGB(220, 40, 40)
        case (false, true): RGB(40, 180, 60)
        case (true, false): RGB(40, 70, 220)
        case (false, false): RGB(250, 250, 250)
        }
    }

    /// Sky bands above a sun and a flat ground.
    static let sunrise = generate(width: 400, height: 300) { x, y, width, height in
        let (dx, dy) = (x - width / 2, y - height * 2 / 3)
        if y > height * 2 / 3 { return RGB(60, 110, 50) }
        if dx * dx + dy * dy < 60 * 60 { return RGB(255, 200, 40) }
        let band = UInt8(min(255, 80 + y / 20 * 16))
        return RGB(band, UInt8(min(255, Int(band) / 2 + 60)), 200)
    }

    /// A black and white checkerboard of 20-pixel squares.
    static let checkerboard = generate(width: 200, height: 200) { x, y, _, _ in
        (x / 20 + y / 20).isMultiple(of: 2) ? RGB(20, 20, 20) : RGB(235, 235, 235)
    }

    private static func generate(
        width: Int,
        height: Int,
        _ colour: (_ x: Int, _ y: Int, _ width: Int, _ height: Int) -> RGB
    ) -> Image {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let value = colour(x, y, width, height)
                pixels += [value.red, value.green, value.blue]
            }
        }
        return Image(width: width, height: height, pixels: pixels)
    }
}
